/**
 * Types shared by the agent machine and the runtime that provides its actors. Types only: the
 * machine stays free of I/O and of runtime imports.
 */
import type { Message, ToolCall } from '../src/conversation/messages.ts';
import type { Usage } from '../src/inference/provider.ts';
import type { ErrorData, LoopEvent, TerminationReason, ToolOutcomeStatus } from '../src/events/loopEvent.ts';

export interface RunLimits {
  readonly maxIterations: number;
  readonly maxTotalTokens: number;
  readonly timeoutMs: number;
  readonly maxRepairTurns: number;
}

export interface AgentMachineInput {
  readonly runId: string;
  readonly agentId: string;
  readonly task: string;
  readonly system?: string;
  /** Prior conversation to continue from (system and user messages, or a full transcript). */
  readonly history?: readonly Message[];
  readonly limits: RunLimits;
  readonly model: string;
  readonly toolNames: readonly string[];
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

export interface AgentContext {
  readonly runId: string;
  readonly agentId: string;
  readonly task: string;
  readonly model: string;
  readonly toolNames: readonly string[];
  readonly limits: RunLimits;
  readonly messages: readonly Message[];
  /** Number of completed `reason` phases. */
  readonly iteration: number;
  readonly usage: Usage;
  readonly costUsd: number;
  /** Consecutive turns in which every proposed call had malformed arguments or an unknown tool. */
  readonly repairTurns: number;
  readonly plan: readonly PlannedCall[];
  /** Aligned with `plan`: the outcome of each call once it has one. */
  readonly outcomes: readonly (ToolOutcome | null)[];
  readonly pending: PendingHuman | null;
  readonly text: string | null;
  /** Why the act phase found the run stuck (see `ActOutput.stuck`); `null` while it is not. */
  readonly stuck: string | null;
  readonly termination: Termination | null;
}

// ---- actor contracts -------------------------------------------------------------------------

export interface HydrateInput {
  readonly runId: string;
  readonly task: string;
  readonly messages: readonly Message[];
}
export interface HydrateOutput {
  /** Messages to insert before the task (e.g. a `[PRE_HYDRATED_CONTEXT]` system message). */
  readonly inject: readonly Message[];
}

export interface ReasonInput {
  readonly runId: string;
  readonly iteration: number;
  readonly messages: readonly Message[];
}
export interface ReasonOutput {
  readonly text: string | null;
  readonly toolCalls: readonly ToolCall[];
  readonly usage: Usage;
  readonly costUsd: number;
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

// ---- events ----------------------------------------------------------------------------------

export type AgentEvent =
  | { readonly type: 'agent.cancel'; readonly reason?: string }
  | { readonly type: 'agent.approve'; readonly toolCallIds?: readonly string[] }
  | { readonly type: 'agent.reject'; readonly toolCallIds?: readonly string[]; readonly reason?: string };

/** What the machine emits (`actor.on(...)`): the loop events it owns. */
export type AgentEmitted = LoopEvent;

export interface AgentOutput {
  readonly runId: string;
  readonly agentId: string;
  readonly reason: TerminationReason;
  readonly text: string | null;
  readonly iterations: number;
  readonly usage: Usage;
  readonly costUsd: number;
  readonly messages: readonly Message[];
  readonly error?: unknown;
  readonly errorData?: ErrorData;
}
