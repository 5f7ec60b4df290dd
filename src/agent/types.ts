/**
 * The shapes of the front door: what `createAgent` takes (`AgentConfig`, grouped by concern), what a run takes
 * (`RunOptions`), and what users hold (`Agent`, `AgentRun`).
 */
import type { Actor } from 'xstate';
import type { Observable } from 'rxjs';
import type { agentMachine } from '../../machines/agent.machine.ts';
import type { PhaseImplementations } from '../../machines/phaseRunner.ts';
import type { RunContext } from '../run/context.ts';
import type { AgentMachineInput } from '../../machines/agent.types.ts';
import type { RunLimits } from '../core/run.ts';
import type { Message } from '../core/messages.ts';
import type { TaskInput } from '../conversation/parts.ts';
import type { JournalEntry, LoopEvent } from '../core/loopEvent.ts';
import type { MemoryJournal } from '../events/memoryJournal.ts';
import type { DeadLetter } from '../executor/memory.ts';
import type { InferenceProvider } from '../core/provider.ts';
import type { RunStore } from '../persistence/fileStore.ts';
import type { Tool } from '../tools/types.ts';
import type { LoopResult } from '../core/run.ts';
import type { RunSource, Traces } from '../traces/query.ts';
import type { SessionMemory } from '../sessions/index.ts';
import type { AgentExperiences } from './experiences.ts';

/** A runtime that runs an agent's runs elsewhere than in the calling process (see `createPostgresRuntime`). */
export interface AgentRuntime {
  /** Called once by `createAgent` with what the runtime needs; returns what the agent uses instead of its own. */
  bind(agent: AgentBinding): BoundRuntime;
}

/** What `createAgent` hands a runtime about one agent. */
export interface AgentBinding {
  readonly agentId: string;
  readonly provider: InferenceProvider;
  readonly tools: readonly Tool[];
  /** The agent's secret rules, over any JSON value: what the runtime stores passes through them. */
  readonly redact: <T>(value: T) => T;
  /** A tool of the agent by name as it is now, MCP servers' tools included (their servers connected, or their lists fetched again, when the name is not known yet). */
  readonly tool: (name: string) => Promise<Tool | undefined>;
  /** Start a run in this process (a worker's first step of it); `call` for a run of one model call without tools. */
  readonly start: (task: string, options: RunOptions, mode?: 'call') => AgentRun;
  /** Resume a run in this process from what its store holds (a worker's later steps). */
  readonly resume: (runId: string) => AgentRun;
}

/** A session's memory kept by a runtime: views of its namespaces over a copy read when opened and on `refresh`, writing through. */
export interface SharedSessionMemory {
  memory(namespace: string): SessionMemory;
  /** Read the memory again: what the tools of a run wrote meanwhile, elsewhere. */
  refresh(): Promise<void>;
  /** Later reads and writes throw `SessionClosedError`. */
  close(): void;
}

/** What a runtime gives an agent: its store, its model and tools as the runtime calls them, its runs and events. */
export interface BoundRuntime {
  readonly store: RunStore;
  readonly provider: InferenceProvider;
  readonly tools: readonly Tool[];
  /** An MCP server's tool, as the runtime calls it. */
  wrapTool(tool: Tool): Tool;
  phases(phases: PhaseImplementations<RunContext>): PhaseImplementations<RunContext>;
  run(task: string, options: RunOptions): Promise<LoopResult>;
  /** Queue a run and follow it from here: its events, its end, and a human's or a cancellation's word for it. `session`: the session whose turn it is. */
  start(task: string, options: RunOptions, mode?: 'call', session?: string): AgentRun;
  /** A session's memory as the runtime keeps it, shared with the tools of the session's runs wherever they run. */
  sessionMemory(sessionId: string): Promise<SharedSessionMemory>;
  /** Follow a run queued before, from any process (and wake it, should it have been left behind). */
  follow(runId: string): AgentRun;
  /** A run for a parent actor to spawn (a strategy's branch), as this runtime runs it. */
  prepare(task: string, options: RunOptions): PreparedRun;
  /** Every journal entry of the agent's runs, from whichever process ran them. */
  readonly events$: Observable<JournalEntry>;
  /** The agent's runs and their journals, for its traces. */
  readonly runs: RunSource;
}

export interface RunOptions {
  /** Prior messages to continue from (e.g. an earlier conversation). */
  readonly history?: readonly Message[];
  readonly runId?: string;
  readonly limits?: Partial<RunLimits>;
  /** Aborting it cancels the run, as `handle.cancel()` does (an already aborted signal cancels it at once). */
  readonly signal?: AbortSignal;
}

/** One streamed text delta, with the run it belongs to (runs of one agent stream side by side). */
export interface TokenDelta {
  readonly runId: string;
  readonly delta: string;
}

/**
 * A run made ready for a parent actor to spawn as its child, so the run lives in the parent's
 * actor system and stops with it. Spawn `logic` with `input`, then `attach` the spawned actor
 * in the same transition (one taken while the parent runs, not its initial entry): XState
 * starts a spawned child after the transition's actions, so nothing the run emits is missed.
 *
 * @example
 * ```ts
 * const prepared = agent.prepare('Summarise the report');
 * // in a machine action of the parent:
 * const ref = spawn(prepared.logic, { id: 'agent', input: prepared.input });
 * const run = prepared.attach(ref);
 * ```
 */
export interface PreparedRun {
  readonly runId: string;
  /** The agent loop machine, provided with this agent's phases. */
  readonly logic: typeof agentMachine;
  readonly input: AgentMachineInput;
  /** Hook the spawned, not yet started actor into the agent's journal, store and result. */
  attach(actor: Actor<typeof agentMachine>): AgentRun;
}

export interface ResumeRunOptions {
  /**
   * Take the run over even while another writer's lease on it is live (you know that writer is
   * gone). The run's first new event, `run.resumed`, then names the writer it was taken from.
   */
  readonly takeover?: boolean;
}

/** What an approval carries besides the calls it approves. */
export interface ApproveOptions {
  /** The answer to an MCP server's question (elicitation): an object matching the form it asked for. */
  readonly answer?: unknown;
}

/** A run in progress. */
export interface AgentRun {
  readonly runId: string;
  /** The XState actor running the loop (inspect it, `getSnapshot()` it). */
  readonly actor: Actor<typeof agentMachine>;
  /** This run's entries only, from its first (replayed from the in-memory journal) and then live. */
  readonly events$: Observable<JournalEntry>;
  /** Resolves with the result however the run ends; never rejects. */
  readonly settled: Promise<LoopResult>;
  /** Resolves with the result of a run that finished with an answer; rejects with a typed error otherwise. */
  readonly result: Promise<LoopResult>;
  /** Abort the in-flight model call and every running tool; the run ends `cancelled`. */
  cancel(reason?: string): void;
  /**
   * Approve calls waiting in `awaitingHuman` (all of them, or the ids given). When an MCP server's
   * question waits instead (`human.awaiting` of kind `elicitation`), `answer` is sent to it:
   * checked against the form it asked for, defaults filled in; a bad answer throws
   * `McpAnswerError` and the run keeps waiting.
   */
  approve(toolCallIds?: readonly string[], options?: ApproveOptions): void;
  /** Reject calls waiting in `awaitingHuman`; the reason goes back to the model. A server's waiting question is declined. */
  reject(reason?: string, toolCallIds?: readonly string[]): void;
  /** The phase the run is in (`reason`, `awaitingHuman`, …) or its final state. */
  phase(): string;
}

/** A run's result, its final answer typed from the agent's `output` schema; without a schema, a plain `LoopResult`. */
export type AgentResult<TOutput = unknown> = unknown extends TOutput ? LoopResult : LoopResult & { readonly output: TOutput };

export interface Agent<TOutput = unknown> {
  readonly id: string;
  /** Every entry of every run of this agent. */
  readonly events$: Observable<JournalEntry>;
  /** Streamed text deltas (when `model.stream` is true), each with its run's id: filter by `runId` to follow one run. */
  readonly tokens$: Observable<TokenDelta>;
  readonly journal: MemoryJournal;
  readonly tools: readonly string[];
  /** The model this agent calls: its provider and the model name it asks for. */
  readonly model: { readonly provider: InferenceProvider; readonly name: string };
  /**
   * Run a task to its end. Resolves with the result, or rejects with a typed error carrying it
   * (a task it cannot start, such as an empty one, rejects too: it never throws). The task is
   * text, or text and parts: `agent.run(['Describe this', image(url)])`.
   */
  run(task: TaskInput, options?: RunOptions): Promise<AgentResult<TOutput>>;
  /**
   * One model call, without tools: a run of one step (journalled, traced and persisted like any
   * run, in `call` mode). Resolves with the result; `result.text` is the reply.
   */
  call(prompt: string, options?: RunOptions): Promise<LoopResult>;
  /** The agent's runs as traces: step DAGs built from their journals (`get`, `list`). */
  readonly traces: Traces;
  /**
   * Open a session: a conversation that each `session.run(message)` continues, persisted by
   * `memory.sessions`, with a memory its tools share (`ctx.session`). One open handle per id.
   */
  session(id: string): Promise<Session>;
  /** Learning and accepting experiences; `undefined` unless `memory.experiences` is set. */
  readonly experiences: AgentExperiences | undefined;
  /** Start a task and get a handle to watch, approve or cancel it. Throws for a task it cannot start. */
  start(task: TaskInput, options?: RunOptions): AgentRun;
  /**
   * The run `runId` if it is in progress on this agent in this process (started, run, resumed or a
   * session's turn): approve, reject or cancel it from code that did not start it. `undefined`
   * for any other run (a durable agent's runs are reached through their runtime).
   */
  handle(runId: string): AgentRun | undefined;
  /** Make a run ready for a parent actor to spawn (see {@link PreparedRun}); `start` spawns its own root actor. */
  prepare(task: string, options?: RunOptions): PreparedRun;
  /**
   * Continue a persisted run (needs `persistence.store`): one that was interrupted, or one that failed with
   * `resumable: true`. The run is rebuilt from its log without calling the model or any tool
   * again; an interrupted tool call is made again (with the same idempotency key) only if its
   * tool is idempotent, else it waits for a human. Iterations and tokens continue; the
   * wall-clock budget starts afresh.
   */
  resume(runId: string, options?: ResumeRunOptions): AgentRun;
  /**
   * Add an event to a live run's stream: numbered in sequence, redacted, journaled (and
   * persisted with a store) and published like the run's own. Returns false when no run with
   * that id is in progress on this agent.
   *
   * @example
   * ```ts
   * agent.record(handle.runId, { type: 'agent.message', from: 'ops', to: agent.id, kind: 'tell' });
   * ```
   */
  record(runId: string, event: LoopEvent): boolean;
  /** Calls recorded by the dead-letter recovery strategy. */
  deadLetters(): DeadLetter[];
  /** Cancel every run in flight and stop the breakers. */
  stop(): void;
  /** `stop()`, then close the agent's MCP server connections (stopping stdio servers). */
  close(): Promise<void>;
}

/**
 * A multi-turn conversation of one agent, persisted by its session store.
 *
 * @example
 * ```ts
 * const session = await agent.session('support-42');
 * await session.run('My order has not arrived.');
 * await session.run('It was order 1234.'); // the model sees the first exchange too
 * await session.close();
 * ```
 */
export interface Session {
  readonly id: string;
  /** Run a message as the next turn: resolves with the result, rejects with a typed error carrying it (like `agent.run`). */
  run(message: string, options?: Omit<RunOptions, 'history'>): Promise<LoopResult>;
  /** The conversation so far (a copy): what the next run starts from. */
  history(): Message[];
  /** The session's memory in a namespace; tools see the `tools` namespace as `ctx.session`. */
  memory(namespace: string): SessionMemory;
  /** Release the session (other processes may then open it). */
  close(): Promise<void>;
}
