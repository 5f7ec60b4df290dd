/**
 * The shapes of the front door: what `createAgent` takes (`AgentConfig`), what a run takes
 * (`RunOptions`), and what users hold (`Agent`, `AgentRun`).
 */
import type { Actor, InspectionEvent, Observer, AnyActorRef } from 'xstate';
import type { Observable } from 'rxjs';
import type { agentMachine } from '../../machines/agent.machine.ts';
import type { RunLimits } from '../core/run.ts';
import type { ContextBudgetOptions } from '../context/index.ts';
import type { Message } from '../core/messages.ts';
import type { JournalEntry, LoopEvent } from '../core/loopEvent.ts';
import type { MemoryJournal } from '../events/memoryJournal.ts';
import type { DeadLetter } from '../executor/memory.ts';
import type { PreHydratorOptions } from '../hydration/index.ts';
import type { InferenceProvider } from '../core/provider.ts';
import type { KnowledgeConfig } from '../knowledge/wiring.ts';
import type { RunStore } from '../persistence/fileStore.ts';
import type { PolicyGate } from '../policy/types.ts';
import type { StuckDetectionOptions } from '../progress/doomLoop.ts';
import type { BreakerOptions } from '../resilience/circuitBreaker.ts';
import type { RecoveryStrategy } from '../resilience/recovery.ts';
import type { SecretRuleOptions } from '../security/secrets.ts';
import type { ToolProfile } from '../tools/profile.ts';
import type { Tool } from '../tools/types.ts';
import type { Hydrator, MessagePreparer } from '../core/hooks.ts';
import type { LoopResult } from '../core/run.ts';

export interface AgentConfig {
  /** Stable id for journals and the agent system. Default: a random `agent_…` id. */
  readonly id?: string;
  readonly model: InferenceProvider;
  /** Model name override for every call (else the provider's default). */
  readonly modelName?: string;
  readonly system?: string;
  readonly tools?: readonly Tool[];
  /** Default: `gates.permissive()`. */
  readonly gate?: PolicyGate;
  readonly limits?: Partial<RunLimits>;
  /** Recovery for tools that declare none. Default: the error goes back to the model. */
  readonly recovery?: RecoveryStrategy;
  /** Breaker settings for every tool (`false` turns breakers off), with per-tool overrides. */
  readonly breakers?: (Partial<BreakerOptions> & { readonly perTool?: Readonly<Record<string, Partial<BreakerOptions>>> }) | false;
  readonly executor?: { readonly maxConcurrency?: number; readonly timeoutMs?: number; readonly maxResultBytes?: number };
  /** Stream model replies (token deltas on `tokens$`). Default false. */
  readonly stream?: boolean;
  readonly temperature?: number;
  readonly maxTokens?: number;
  /** XState inspection observer for every run's actor (e.g. the Stately inspector). */
  readonly inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** Capacity of the in-memory journal (entries across runs; oldest dropped). Default 10 000. */
  readonly journalCapacity?: number;
  /** Persist journals and snapshots so runs can be listed, replayed and resumed (`createFileStore()`). */
  readonly store?: RunStore;
  /**
   * Secrets to scrub from events, journals and snapshots, on top of the defaults (API-key shapes,
   * bearer tokens, values under keys like `apiKey`/`password`, and the values of OPENAI_API_KEY
   * and friends from the environment).
   */
  readonly redact?: SecretRuleOptions;
  /** Unstable: transforms of the conversation the model sees on each reason step. */
  readonly experimental_preparers?: readonly MessagePreparer[];
  /** Unstable: what `hydrate` does before the first model call. */
  readonly experimental_hydrator?: Hydrator;
  /**
   * End (or redirect) runs stuck in a loop: the same call with the same arguments, or
   * near-identical tool errors, `maxRepeats` (3) times in a row. Off unless set.
   */
  readonly stuckDetection?: StuckDetectionOptions | false;
  /** Keep what the model sees within a token budget (sliding window, observation masking, anchored summary). Off by default. */
  readonly context?: ContextBudgetOptions;
  /** Filter the tools the model sees: include/exclude globs, requireVerified, maxTools. Off by default. */
  readonly toolProfile?: ToolProfile;
  /**
   * The knowledge bridge: `[KNOWLEDGE_CONTEXT]` before each reason step, the recall/store tools,
   * and the final answer remembered as working memory. Off by default.
   */
  readonly knowledge?: KnowledgeConfig;
  /**
   * Resolve references in the task (URLs, paths, `#42`, `PR #55`, custom patterns) before the
   * first model call and inject one `[PRE_HYDRATED_CONTEXT]` message. Off by default.
   */
  readonly preHydration?: PreHydratorOptions;
}

export interface RunOptions {
  /** Prior messages to continue from (e.g. an earlier conversation). */
  readonly history?: readonly Message[];
  readonly runId?: string;
  readonly limits?: Partial<RunLimits>;
  /**
   * Run as a child of this actor: in its actor system (its inspector sees the run's actors) with
   * it as the run actor's parent. A strategy's branches and the agent system pass their own actor.
   */
  readonly parent?: AnyActorRef;
}

export interface ResumeRunOptions {
  /**
   * Take the run over even while another writer's lease on it is live (you know that writer is
   * gone). The run's first new event, `run.resumed`, then names the writer it was taken from.
   */
  readonly takeover?: boolean;
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
  /** Approve calls waiting in `awaitingHuman` (all of them, or the ids given). */
  approve(toolCallIds?: readonly string[]): void;
  /** Reject calls waiting in `awaitingHuman`; the reason goes back to the model. */
  reject(reason?: string, toolCallIds?: readonly string[]): void;
  /** The phase the run is in (`reason`, `awaitingHuman`, …) or its final state. */
  phase(): string;
}

export interface Agent {
  readonly id: string;
  /** Every entry of every run of this agent. */
  readonly events$: Observable<JournalEntry>;
  /** Streamed text deltas (when `stream: true`). */
  readonly tokens$: Observable<string>;
  readonly journal: MemoryJournal;
  readonly tools: readonly string[];
  /** Run a task to its end. Resolves with the result, or rejects with a typed error carrying it. */
  run(task: string, options?: RunOptions): Promise<LoopResult>;
  /** Start a task and get a handle to watch, approve or cancel it. */
  start(task: string, options?: RunOptions): AgentRun;
  /**
   * Continue a persisted run (needs `store`): one that was interrupted, or one that failed with
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
}
