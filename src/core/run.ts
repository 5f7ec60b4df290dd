/** The domain of one run, shared by the machines and the runtime. */
import type { ErrorData, TerminationReason, ToolOutcomeStatus } from './loopEvent.ts';
import type { ImagePart, Message, ReasoningPart, ToolCall } from './messages.ts';
import type { Usage } from './provider.ts';

export interface RunLimits {
  readonly maxIterations: number;
  readonly maxTotalTokens: number;
  readonly timeoutMs: number;
  readonly maxRepairTurns: number;
}

export interface PlannedCall {
  readonly call: ToolCall;
  /** Validated (and possibly gate-modified) arguments; `undefined` when the call is blocked. */
  readonly arguments: unknown;
  /** `run`: execute; `confirm`: wait for a human first; `blocked`: do not run, `note` goes back to the model. */
  readonly verdict: 'run' | 'confirm' | 'blocked';
  readonly note?: string;
  readonly blockedBy?: 'invalid_arguments' | 'unknown_tool' | 'policy';
}

export interface ToolOutcome {
  readonly toolCallId: string;
  readonly tool: string;
  readonly status: ToolOutcomeStatus;
  readonly content: string;
  readonly isError: boolean;
  /** The tool's name when its content comes from outside the user's trust (fenced as data). */
  readonly untrusted?: string;
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

export interface HydrateInput {
  readonly runId: string;
  readonly task: string;
  readonly messages: readonly Message[];
}
export interface HydrateOutput {
  readonly inject: readonly Message[];
  /** Experiences the injected text shows: the run records them and counts its outcome for them. */
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
  readonly continuations?: number;
  readonly refusal?: string;
  /** The model's reasoning, kept on the assistant message so providers that sign it get it back. */
  readonly reasoning?: readonly ReasoningPart[];
  readonly output?: unknown;
  /** The reply was meant as the final answer but fails the schema: what was wrong, for a repair turn. */
  readonly repair?: readonly Message[];
  /** The first call's `Completion.call`: continuations stream into the message that call opened. */
  readonly call?: string;
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

/** An AbortSignal's shape, so the act phase can make a real signal only once someone listens. */
export interface Cancellation {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** What any run produced (agent, system ask, strategy): one shape, so callers read the same fields whatever they started. */
export interface RunResult {
  readonly runId: string;
  /** The agent whose run this was: a strategy run's is its runner's (`strategy_<name>` by default). */
  readonly agentId: string;
  readonly status: 'done' | 'failed' | 'cancelled';
  /** Why it ended, in the journal's terms: the same value as its `run.terminated` entry. */
  readonly reason: TerminationReason;
  /** The final answer; for an unfinished agent run, its last reply (a strategy's is `null` unless `done`). */
  readonly text: string | null;
  /** Decisions the run made: an agent's model calls, a strategy's rounds (`step`/`aggregate`). */
  readonly iterations: number;
  /** Every token the run paid for, a strategy's summed over its sub-agent runs and direct calls. */
  readonly usage: Usage;
  readonly costUsd: number;
  readonly durationMs: number;
  readonly error?: ErrorData;
  readonly cause?: unknown;
}

export interface LoopResult extends RunResult {
  readonly messages: readonly Message[];
  readonly output?: unknown;
  /** It failed for an outside cause (provider, network, wall clock) and a store kept it: `agent.resume(runId)` continues it. */
  readonly resumable?: true;
}

/** A durable run's calls: answered from their recorded outcome, or noted for the worker to make. */
export interface EffectLedger {
  effect(key: string, request: () => unknown, signal: AbortSignal | undefined): Promise<unknown>;
}
