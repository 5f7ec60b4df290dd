/**
 * The shapes of the front door: what `createAgent` takes (`AgentConfig`, grouped by concern), what a run takes
 * (`RunOptions`), and what users hold (`Agent`, `AgentRun`).
 */
import type { Actor, InspectionEvent, Observer } from 'xstate';
import type { z } from 'zod';
import type { Observable } from 'rxjs';
import type { agentMachine } from '../../machines/agent.machine.ts';
import type { PhaseImplementations } from '../../machines/phaseRunner.ts';
import type { RunContext } from '../run/context.ts';
import type { AgentMachineInput } from '../../machines/agent.types.ts';
import type { RunLimits } from '../core/run.ts';
import type { ContextBudgetOptions } from '../context/index.ts';
import type { Message } from '../core/messages.ts';
import type { ContentLimits, TaskInput } from '../conversation/parts.ts';
import type { JournalEntry, LoopEvent } from '../core/loopEvent.ts';
import type { MemoryJournal } from '../events/memoryJournal.ts';
import type { DeadLetter } from '../executor/memory.ts';
import type { PreHydratorOptions } from '../hydration/index.ts';
import type { InferenceProvider, ReasoningEffort } from '../core/provider.ts';
import type { KnowledgeConfig } from '../knowledge/wiring.ts';
import type { RunStore } from '../persistence/fileStore.ts';
import type { PolicyGate } from '../policy/types.ts';
import type { StuckDetectionOptions } from '../progress/doomLoop.ts';
import type { BreakerOptions } from '../resilience/circuitBreaker.ts';
import type { RecoveryStrategy } from '../resilience/recovery.ts';
import type { SecretRuleOptions } from '../security/secrets.ts';
import type { ToolProfile } from '../tools/profile.ts';
import type { TaintOptions } from '../policy/taint.ts';
import type { Tool } from '../tools/types.ts';
import type { McpServerConfig } from '../mcp/connect.ts';
import type { AgentHooks, Hydrator } from '../core/hooks.ts';
import type { LoopResult } from '../core/run.ts';
import type { RunSource, Traces } from '../traces/query.ts';
import type { TelemetryOptions } from '../telemetry/index.ts';
import type { LoadedSkills, Skill } from '../skills/index.ts';
import type { SessionMemory, SessionStore } from '../sessions/index.ts';
import type { AgentExperiences, ExperiencesConfig } from './experiences.ts';

/**
 * What `createAgent` takes, grouped by concern: the model and how it is called, what a call may
 * do (`policy`), how failures are contained (`resilience`), what the model sees (`context`),
 * where runs are kept (`persistence`) and how to watch them (`observe`). Only `model` is
 * required; every group is optional and off or permissive by default. An unknown key is
 * rejected with a message naming it.
 *
 * @example
 * ```ts
 * const agent = createAgent({
 *   model: { provider: openAICompatible(), name: 'gpt-4o-mini', temperature: 0 },
 *   system: 'You are a careful assistant.',
 *   tools: [add],
 *   policy: { gate: gates.rules({ deny: ['shell_*'] }) },
 *   resilience: { breakers: { failureThreshold: 3 }, tools: { timeoutMs: 30_000 } },
 *   limits: { maxIterations: 10 },
 *   context: { budget: { tokenBudget: 16_000 } },
 *   persistence: { store: createFileStore() },
 *   observe: { events: (entry) => console.log(entry.event.type) },
 * });
 * ```
 */
export interface AgentConfig<TOutput = unknown> {
  /** Stable id for journals and the agent system. Default: a random `agent_…` id. */
  readonly id?: string;
  /** The system prompt of every run (redacted like everything else). */
  readonly system?: string;
  /**
   * The model backend, and how each call is made. A bare provider is shorthand for
   * `{ provider }`: its default model, no temperature or token cap, no streaming.
   */
  readonly model: InferenceProvider | ModelConfig;
  readonly tools?: readonly Tool[];
  /**
   * A schema the final answer must match: `result.output` is the validated answer, typed from it.
   * Sent as the response format to a provider with structured output, else offered to the model
   * as a `final_answer` tool it must call. An answer that does not match goes back to the model
   * as a repair turn (at most `limits.maxRepairTurns` in a row; then a RunError with code model_repair_exhausted).
   */
  readonly output?: z.ZodType<TOutput>;
  /** MCP servers whose tools the agent also gets (`<server>_<tool>`), connected on first use; `close()` closes them. */
  readonly mcpServers?: readonly McpServerConfig[];
  /** What the model may do: which calls run, which tools it sees, what is scrubbed from logs. */
  readonly policy?: AgentPolicyConfig;
  /** How tool failures, slow tools and loops are contained. */
  readonly resilience?: AgentResilienceConfig;
  /** Per-run budgets (iterations, tokens, wall clock, repair turns); a run's own limits override these. */
  readonly limits?: Partial<RunLimits>;
  /** What the model sees on each reason step, beyond the conversation itself. */
  readonly context?: AgentContextConfig;
  /**
   * The knowledge bridge: `[KNOWLEDGE_CONTEXT]` before each reason step, the recall/store tools,
   * and the final answer remembered as working memory. Off by default.
   */
  readonly knowledge?: KnowledgeConfig;
  /** What the agent carries across runs: skills it can load, experiences it learned, sessions. */
  readonly memory?: AgentMemoryConfig;
  /** Where runs are kept, so they can be listed, replayed and resumed. In memory only by default. */
  readonly persistence?: AgentPersistenceConfig;
  /** Watching the agent: XState inspection, every journal entry, the in-memory journal's size. */
  readonly observe?: AgentObserveConfig;
  /**
   * Lifecycle hooks into every run: see or change each model request, approve, deny or change
   * each tool call, rewrite each tool result, hear of turns and failures. See `AgentHooks`.
   */
  readonly hooks?: AgentHooks;
  /**
   * Where the agent's runs execute when they must outlive a process: `createPostgresRuntime()`
   * makes each run a durable actor in PostgreSQL, advanced by any number of worker processes.
   * `agent.run()` then queues the run and resolves when a worker finishes it. In process by default.
   */
  readonly runtime?: AgentRuntime;
}

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
  /** Later reads and writes throw `SessionError` (`session_closed`). */
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

/**
 * The model and the settings of every call to it, kept together because they only mean
 * something for that provider (a model name of one vendor is not one of another).
 *
 * @example
 * ```ts
 * createAgent({ model: { provider: openAICompatible(), name: 'gpt-4o', temperature: 0.2, stream: true } });
 * ```
 */
export interface ModelConfig {
  readonly provider: InferenceProvider;
  /** Model name for every call. Default: the provider's `defaultModel`. */
  readonly name?: string;
  readonly temperature?: number;
  readonly maxTokens?: number;
  /** Stream replies (token deltas on `tokens$`). Default false. */
  readonly stream?: boolean;
  /** How hard a reasoning model (o-series, gpt-5) thinks; sent only to models that accept it. */
  readonly reasoningEffort?: ReasoningEffort;
  /**
   * What to do when a reply hits the output-token cap (`finish_reason: length`). `'end'`
   * (default): the run fails with reason `length` (a RunError with code reply_truncated), the cut-off text in its
   * messages. `{ continue: n }`: ask the model to go on where it stopped, up to n times, joining
   * the pieces into one reply; still cut off after n, the run ends as with `'end'`.
   */
  readonly onLength?: LengthPolicy;
  /**
   * The model takes images and PDF documents: a task may hold them (`agent.run(['Describe', image(url)])`)
   * and images MCP tools return reach it as images. Default false: such a task is refused with
   * ConversationError (invalid_content_part), and tool images are described in text.
   */
  readonly vision?: boolean;
}

/** See `ModelConfig.onLength`. */
export type LengthPolicy = 'end' | { readonly continue: number };

/** What the model is allowed to do, and what never leaves the process in the clear. */
export interface AgentPolicyConfig {
  /** Decides every proposed tool call: allow, deny, or ask a human. Default: `gates.permissive()`. */
  readonly gate?: PolicyGate;
  /** Filter the tools the model sees: include/exclude globs, requireVerified, maxTools. Off by default. */
  readonly toolProfile?: ToolProfile;
  /**
   * After untrusted content (web pages, MCP results, pre-hydrated references) a side-effect call
   * waits for a human (`onSideEffect: 'deny'` refuses it; `allow` lists tools exempt). On by
   * default; `false` turns it off.
   */
  readonly taint?: TaintOptions | false;
  /**
   * Secrets to scrub from events, journals and snapshots, on top of the defaults (API-key shapes,
   * bearer tokens, values under keys like `apiKey`/`password`, and the values of OPENAI_API_KEY
   * and friends from the environment).
   */
  readonly redact?: SecretRuleOptions;
}

/** Containment of failures: breakers, recovery, tool execution bounds and loop detection. */
export interface AgentResilienceConfig {
  /** Breaker settings for every tool (`false` turns breakers off), with per-tool overrides. */
  readonly breakers?: (Partial<BreakerOptions> & { readonly perTool?: Readonly<Record<string, Partial<BreakerOptions>>> }) | false;
  /** Recovery for tools that declare none. Default: the error goes back to the model. */
  readonly recovery?: RecoveryStrategy;
  /** Bounds on tool execution: calls at once, time per call, size of a result the model sees. */
  readonly tools?: { readonly maxConcurrency?: number; readonly timeoutMs?: number; readonly maxResultBytes?: number };
  /**
   * End (or redirect) runs stuck in a loop: the same call with the same arguments, or
   * near-identical tool errors, `maxRepeats` (5) times in a row. On by default; `false` turns it off.
   */
  readonly stuckDetection?: StuckDetectionOptions | false;
}

/** Shaping the conversation the model sees, before the first call and on every reason step. */
export interface AgentContextConfig {
  /** Keep what the model sees within a token budget (sliding window, observation masking, anchored summary). Off by default. */
  readonly budget?: ContextBudgetOptions;
  /**
   * When the model says a request is over its context window, compact the request (with
   * `budget`'s strategy, or observation masking) under the window the error reported (else to
   * half its size), send it once more, and keep the run's later requests under it. On by
   * default; `false`: the `ContextLengthError` ends the run.
   */
  readonly compactOnOverflow?: boolean;
  /**
   * Resolve references in the task (URLs, paths, `#42`, `PR #55`, custom patterns) before the
   * first model call and inject one `[PRE_HYDRATED_CONTEXT]` message. Off by default.
   */
  readonly preHydration?: PreHydratorOptions;
  /** Unstable: what `hydrate` does before the first model call (replaces `preHydration`). */
  readonly experimental_hydrator?: Hydrator;
  /** Size limits on images and files in a task (defaults: 5 MiB an image, 10 MiB a file). */
  readonly content?: ContentLimits;
}

/** What the agent carries across runs. */
export interface AgentMemoryConfig {
  /**
   * Skills (`await loadSkills()`): listed by name and description in the system prompt, loaded
   * on demand with the `skill` tool; while one is active, the model is offered only the tools it
   * names. Skipped skill files are reported as warnings, never fatal.
   */
  readonly skills?: LoadedSkills | readonly Skill[];
  /**
   * Experiences: before each run the active ones relevant to its task go in as system text, with
   * their success rates; each run's outcome updates those rates; `agent.experiences.learn(run)`
   * proposes new ones (pending until accepted, unless `autoAccept`).
   */
  readonly experiences?: ExperiencesConfig;
  /**
   * Where `agent.session(id)` keeps conversations: `{ dir }` for files (across processes; the
   * agent's secret rules apply), or a store of your own. Default: in memory, for this process.
   */
  readonly sessions?: SessionStore | { readonly dir?: string };
}

export interface AgentPersistenceConfig {
  /** Persist each run's log so runs can be listed, replayed and resumed (`createFileStore()`). */
  readonly store?: RunStore;
}

export interface AgentObserveConfig {
  /** XState inspection observer for every run's actor (e.g. the Stately inspector). */
  readonly inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /**
   * Receives every journal entry of every run of this agent, from creation on (the same stream
   * as `agent.events$`, subscribed for you). A throwing handler is reported, never fatal.
   */
  readonly events?: Partial<Observer<JournalEntry>> | ((entry: JournalEntry) => void);
  /** Capacity of the in-memory journal (entries across runs; oldest dropped). Default 10 000. */
  readonly journalCapacity?: number;
  /**
   * OpenTelemetry spans for every run (`invoke_agent`, `chat`, `execute_tool`, with `gen_ai.*`
   * attributes): `true` for the registered tracer provider (a no-op when none is), or a tracer.
   */
  readonly telemetry?: true | TelemetryOptions;
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
   * `McpError` (`mcp_answer_invalid`) and the run keeps waiting.
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
