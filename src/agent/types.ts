import type { Actor } from 'xstate';
import type { Observable } from 'rxjs';
import type { agentMachine } from '../../machines/agent.machine.ts';
import type { PhaseImplementations } from '../../machines/phaseRunner.ts';
import type { RunContext } from '../run/context.ts';
import type { AgentMachineInput } from '../../machines/agent.types.ts';
import type { RunLimits } from '../core/run.ts';
import type { ContentPart, Message } from '../core/messages.ts';
import type { ContentLimits, TaskInput } from '../conversation/parts.ts';
import type { BlobStore } from '../persistence/blobs.ts';
import type { JournalEntry, LoopEvent } from '../core/loopEvent.ts';
import type { MemoryJournal } from '../events/memoryJournal.ts';
import type { DeadLetter } from '../executor/memory.ts';
import type { InferenceProvider, StructuredOutputSpec } from '../core/provider.ts';
import type { RunStore } from '../persistence/fileStore.ts';
import type { Tool } from '../tools/types.ts';
import type { LoopResult } from '../core/run.ts';
import type { RunSource, Traces } from '../traces/query.ts';
import type { SessionMemory } from '../sessions/index.ts';
import type { AgentExperiences } from './experiences.ts';
import type { StreamRedactor } from '../security/streamRedactor.ts';

/** A durable run's task: text, or text and image and file parts. */
export type DurableTask = string | readonly ContentPart[];

/** A runtime that runs an agent's runs elsewhere than in the calling process (see `createPostgresRuntime`). */
export interface AgentRuntime {
  bind(agent: AgentBinding): BoundRuntime;
  /**
   * The id a run asked for now must have, or undefined when the caller names it: a durable tool call's
   * runs are named after the call, so the call made again finds them. A system names a task's run with it.
   */
  runIdFor?(): string | undefined;
}

/** What `createAgent` hands a runtime about one agent. */
export interface AgentBinding {
  readonly agentId: string;
  readonly provider: InferenceProvider;
  readonly tools: readonly Tool[];
  /** The agent's secret rules: what the runtime stores passes through them. */
  readonly redact: <T>(value: T) => T;
  /** The same rules on a JSON copy of a value never changed once made (a message): copied once per object while the rules stay. */
  readonly redactCopy: (value: unknown) => unknown;
  /** What a model call asking for the agent's structured answer validates the reply against. */
  readonly output?: StructuredOutputSpec;
  /** The same rules for one streamed text (a reply's deltas), which a secret may straddle. */
  readonly redactStream: () => StreamRedactor;
  /** A tool by name as it is now, MCP servers' tools included. */
  readonly tool: (name: string) => Promise<Tool | undefined>;
  /** Start a run in this process (a worker's first step of it); `call` for a run of one model call without tools. */
  readonly start: (task: TaskInput, options: RunOptions, mode?: 'call') => AgentRun;
  /** For an agent whose model takes images: the limits the images its tools return are checked against. */
  readonly images?: ContentLimits & { readonly vision: true };
  /** Resume a run in this process from what its store holds (a worker's later steps). */
  readonly resume: (runId: string) => AgentRun;
}

/** A session's memory kept by a runtime: views of its namespaces over a copy read when opened and on `refresh`, writing through. */
export interface SharedSessionMemory {
  memory(namespace: string): SessionMemory;
  refresh(): Promise<void>;
  close(): void;
}

/** What a runtime gives an agent: its store, its model and tools as the runtime calls them, its runs and events. */
export interface BoundRuntime {
  readonly store: RunStore;
  readonly provider: InferenceProvider;
  readonly tools: readonly Tool[];
  wrapTool(tool: Tool): Tool;
  phases(phases: PhaseImplementations<RunContext>): PhaseImplementations<RunContext>;
  /** Where a run's image and file parts are read from while a worker steps it. */
  readonly blobs: BlobStore;
  /** `task`: text, or checked parts whose bytes the runtime stores with the run. */
  run(task: DurableTask, options: RunOptions): Promise<LoopResult>;
  /** Queue a run and follow it from here; `session`: the session whose turn it is. */
  start(task: DurableTask, options: RunOptions, mode?: 'call', session?: string): AgentRun;
  sessionMemory(sessionId: string): Promise<SharedSessionMemory>;
  /** Follow a run queued before, from any process. */
  follow(runId: string): AgentRun;
  prepare(task: DurableTask, options: RunOptions): PreparedRun;
  readonly events$: Observable<JournalEntry>;
  readonly runs: RunSource;
}

export interface RunOptions {
  readonly history?: readonly Message[];
  readonly runId?: string;
  readonly limits?: Partial<RunLimits>;
  /** Aborting it cancels the run, as `handle.cancel()` does. */
  readonly signal?: AbortSignal;
}

/** One streamed text delta, with the run it belongs to (runs of one agent stream side by side). */
export interface TokenDelta {
  readonly runId: string;
  readonly delta: string;
}

/**
 * A run for a parent actor to spawn: spawn `logic` with `input`, then `attach` the actor in the same
 * transition (not the parent's initial entry), as XState starts a child after the transition's actions.
 */
export interface PreparedRun {
  readonly runId: string;
  readonly logic: typeof agentMachine;
  readonly input: AgentMachineInput;
  attach(actor: Actor<typeof agentMachine>): AgentRun;
}

export interface ResumeRunOptions {
  /** Take the run over even while another writer's lease on it is live (you know that writer is gone). */
  readonly takeover?: boolean;
}

export interface ApproveOptions {
  /** The answer to an MCP server's question (elicitation), matching the form it asked for. */
  readonly answer?: unknown;
}

export interface AgentRun {
  readonly runId: string;
  readonly actor: Actor<typeof agentMachine>;
  /** This run's entries, from its first. */
  readonly events$: Observable<JournalEntry>;
  /** Resolves with the result however the run ends; never rejects. */
  readonly settled: Promise<LoopResult>;
  /** Resolves with the result of a run that finished with an answer; rejects with a typed error otherwise. */
  readonly result: Promise<LoopResult>;
  cancel(reason?: string): void;
  /** Approve calls waiting in `awaitingHuman` (all, or the ids given), or answer a waiting MCP question (an `McpError`, code `mcp_answer_invalid`, if it does not fit). */
  approve(toolCallIds?: readonly string[], options?: ApproveOptions): void;
  /** Reject calls waiting in `awaitingHuman` (the reason goes back to the model), or decline a waiting MCP question. */
  reject(reason?: string, toolCallIds?: readonly string[]): void;
  phase(): string;
}

/** A run's result, `output` typed from the agent's `output` schema. */
export type AgentResult<TOutput = unknown> = unknown extends TOutput ? LoopResult : LoopResult & { readonly output: TOutput };

export interface Agent<TOutput = unknown> {
  readonly id: string;
  readonly events$: Observable<JournalEntry>;
  /** Streamed text deltas (with `model.stream`), each with its run's id. */
  readonly tokens$: Observable<TokenDelta>;
  readonly journal: MemoryJournal;
  readonly tools: readonly string[];
  readonly model: { readonly provider: InferenceProvider; readonly name: string };
  /** Run a task (text, or text and parts) to its end; rejects with a typed error, never throws. */
  run(task: TaskInput, options?: RunOptions): Promise<AgentResult<TOutput>>;
  /** One model call without tools: a run of one step in `call` mode; `result.text` is the reply. */
  call(prompt: string, options?: RunOptions): Promise<LoopResult>;
  readonly traces: Traces;
  /** A conversation each `session.run(message)` continues, kept by `memory.sessions`; one open handle per id. */
  session(id: string): Promise<Session>;
  readonly experiences: AgentExperiences | undefined;
  start(task: TaskInput, options?: RunOptions): AgentRun;
  /** The run `runId` if it is in progress on this agent in this process (started, or prepared and attached by a host). */
  handle(runId: string): AgentRun | undefined;
  prepare(task: string, options?: RunOptions): PreparedRun;
  /** Continue an interrupted or `resumable` persisted run from its log; an interrupted call runs again only if its tool is idempotent. */
  resume(runId: string, options?: ResumeRunOptions): AgentRun;
  /** Add an event to a live run's stream as if the run emitted it; false when no such run is in progress. */
  record(runId: string, event: LoopEvent): boolean;
  deadLetters(): DeadLetter[];
  /** Cancel every run in flight and stop the breakers. */
  stop(): void;
  /** `stop()`, then close the agent's MCP server connections. */
  close(): Promise<void>;
}

/** A multi-turn conversation of one agent, persisted by its session store. */
export interface Session {
  readonly id: string;
  run(message: string, options?: Omit<RunOptions, 'history'>): Promise<LoopResult>;
  history(): Message[];
  /** Tools see the `tools` namespace as `ctx.session`. */
  memory(namespace: string): SessionMemory;
  close(): Promise<void>;
}
