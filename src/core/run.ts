/**
 * The domain of one agent run, shared by the machines and the runtime: its limits, the calls the
 * gate planned and their outcomes, what each phase takes and returns, and the run's result.
 * Types only.
 */
import type { ErrorData, TerminationReason, ToolOutcomeStatus } from './loopEvent.ts';
import type { ImagePart, Message, ReasoningPart, ToolCall } from './messages.ts';
import type { Usage } from './provider.ts';

export interface RunLimits {
  readonly maxIterations: number;
  readonly maxTotalTokens: number;
  readonly timeoutMs: number;
  readonly maxRepairTurns: number;
}

/** What the gate phase decided for one proposed call. */
export interface PlannedCall {
  readonly call: ToolCall;
  /** Validated (and possibly gate-modified) arguments; `undefined` when the call is blocked. */
  readonly arguments: unknown;
  /** `run`: execute; `confirm`: wait for a human first; `blocked`: do not run, `note` goes back to the model. */
  readonly verdict: 'run' | 'confirm' | 'blocked';
  readonly note?: string;
  /** Why a call is blocked, when it is: the model's arguments, its tool name, or the policy. */
  readonly blockedBy?: 'invalid_arguments' | 'unknown_tool' | 'policy';
}

/** The result of running one call, as it will enter the conversation. */
export interface ToolOutcome {
  readonly toolCallId: string;
  readonly tool: string;
  readonly status: ToolOutcomeStatus;
  readonly content: string;
  readonly isError: boolean;
  /** The tool's name when its content comes from outside the user's trust (fenced as data). */
  readonly untrusted?: string;
  /** Images the tool returned for a model that takes them (bytes by reference). */
  readonly parts?: readonly ImagePart[];
}

export interface PendingHuman {
  readonly kind: 'confirmation' | 'escalation';
  readonly toolCallIds: readonly string[];
}

export interface Termination {
  readonly reason: TerminationReason;
  /** The original error when one ended the run (kept for the runtime to rethrow). */
  readonly error?: unknown;
  readonly errorData?: ErrorData;
}

// ---- phase contracts -------------------------------------------------------------------------

export interface HydrateInput {
  readonly runId: string;
  readonly task: string;
  readonly messages: readonly Message[];
}
export interface HydrateOutput {
  /** Messages to insert before the task (e.g. a `[PRE_HYDRATED_CONTEXT]` system message). */
  readonly inject: readonly Message[];
  /**
   * Ids of the experiences the injected text shows: the run keeps them (its replies and
   * checkpoints record them), and its outcome is counted for them once it ends.
   */
  readonly experiences?: readonly string[];
}

export interface ReasonInput {
  readonly runId: string;
  readonly iteration: number;
  readonly messages: readonly Message[];
  /** Estimated tokens the run's requests must stay under, learned from a context-length error. */
  readonly contextLimit?: number;
}
export interface ReasonOutput {
  readonly text: string | null;
  readonly toolCalls: readonly ToolCall[];
  readonly usage: Usage;
  readonly costUsd: number;
  /** Set when the reply hit the output-token cap and the agent's policy is to end the run. */
  readonly truncated?: true;
  /** Set when this call overflowed the context window: the run's later requests stay under it (`ReasonInput.contextLimit`). */
  readonly contextLimit?: number;
  /** How many times the model was asked to go on after hitting the cap (the `onLength` policy). */
  readonly continuations?: number;
  /** The model declined to answer: the run ends with reason `refusal`. */
  readonly refusal?: string;
  /** The model's reasoning, kept on the assistant message so providers that sign it get it back. */
  readonly reasoning?: readonly ReasoningPart[];
  /** The final answer, validated, when the run asks for one that matches a schema. */
  readonly output?: unknown;
  /**
   * The reply was meant as the final answer but does not match the schema: these messages follow
   * it (what was wrong, as a user message or as the result of its final-answer call) and the model
   * gets a repair turn.
   */
  readonly repair?: readonly Message[];
}

export interface GateInput {
  readonly runId: string;
  readonly iteration: number;
  readonly calls: readonly ToolCall[];
  readonly messages: readonly Message[];
}
export interface GateOutput {
  readonly plan: readonly PlannedCall[];
}

export interface ActCall {
  readonly index: number;
  readonly call: ToolCall;
  readonly arguments: unknown;
}
export interface ActInput {
  readonly runId: string;
  readonly iteration: number;
  readonly calls: readonly ActCall[];
}
export interface ActOutput {
  /** One outcome per input call, in the same order. */
  readonly outcomes: readonly ToolOutcome[];
  /** Set when the act phase found the run stuck in a loop: the run ends with `stuck` after observing. */
  readonly stuck?: { readonly reason: string };
}

/**
 * What running work needs of its caller's cancellation. An AbortSignal is one; an agent's act
 * phase passes its own, which makes the real AbortSignal only when a listener is added, so a
 * phase whose tools answer synchronously never makes one.
 */
export interface Cancellation {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * What any run produced, whichever way it ended: an agent run, a system ask (an agent run on a
 * host) and a strategy run all resolve with one. One shape, so a caller that only wants the
 * answer, the outcome and the bill reads the same fields whatever kind of run it started.
 * `LoopResult` and `StrategyResult` extend it with what only their kind of run has.
 */
export interface RunResult {
  readonly runId: string;
  /** The agent whose run this was: a strategy run's is its runner's (`strategy_<name>` by default). */
  readonly agentId: string;
  /** `done` with a final answer, `failed` on a limit or error, `cancelled` by the caller. */
  readonly status: 'done' | 'failed' | 'cancelled';
  /** Why it ended, in the journal's terms: the same value as its `run.terminated` entry. */
  readonly reason: TerminationReason;
  /**
   * The final answer text. When an agent run did not finish, its last model reply (it may help
   * the caller); a strategy has no such reply, so its `text` is `null` unless `status` is `done`.
   */
  readonly text: string | null;
  /** Decisions the run made: an agent's model calls, a strategy's rounds (`step`/`aggregate`). */
  readonly iterations: number;
  /** Every token the run paid for, a strategy's summed over its sub-agent runs and direct calls. */
  readonly usage: Usage;
  /** USD over the same calls as `usage` (zero for a model without prices). */
  readonly costUsd: number;
  readonly durationMs: number;
  /** What went wrong, JSON-safe, when the run did not finish with an answer. */
  readonly error?: ErrorData;
  /** The original thrown value behind `error`, when there was one. */
  readonly cause?: unknown;
}

/** What an agent run (or a system ask) produced: a `RunResult` with its conversation. */
export interface LoopResult extends RunResult {
  readonly messages: readonly Message[];
  /** The final answer validated against the agent's `output` schema (absent without one). */
  readonly output?: unknown;
  /**
   * The run failed for a reason outside its own logic (the provider was down or refused the
   * key, the network failed, its wall-clock limit passed) and a store kept it: `agent.resume(runId)`
   * continues it, with a fresh wall-clock budget, once the cause is gone.
   */
  readonly resumable?: true;
}

/**
 * Where a durable run's model and tool calls go while a worker steps it: a call is answered by
 * its recorded outcome, or noted for the worker to make (the promise settles when it has).
 */
export interface EffectLedger {
  effect(key: string, request: () => unknown, signal: AbortSignal | undefined): Promise<unknown>;
}
