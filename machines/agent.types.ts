/**
 * The agent machine's own types: its input, context, events and output. The domain types it
 * shares with the runtime (calls, outcomes, limits, the phases' contracts) are in src/core/run.ts.
 */
import type { ErrorData, LoopEvent, TerminationReason } from '../src/core/loopEvent.ts';
import type { ContentPart, Message } from '../src/core/messages.ts';
import type { Usage } from '../src/core/provider.ts';
import type { PendingHuman, PlannedCall, RunLimits, Termination, ToolOutcome } from '../src/core/run.ts';

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
  /** `call`: one model call without tools (`agent.call`); default a run of the loop. */
  readonly mode?: 'call';
  /** The task as parts (images and files by reference), when it has any; `task` is its text. */
  readonly content?: readonly ContentPart[];
}

export interface AgentContext {
  readonly runId: string;
  readonly agentId: string;
  readonly task: string;
  readonly model: string;
  readonly toolNames: readonly string[];
  readonly mode?: 'call';
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
  /** The experiences the hydrate phase showed the run, by id (see `HydrateOutput.experiences`). */
  readonly experiences?: readonly string[];
  /** The validated final answer, when the run asks for one that matches a schema. */
  readonly output?: unknown;
  /** Estimated tokens the run's requests stay under, learned from a context-length error (see `ReasonOutput.contextLimit`). */
  readonly contextLimit?: number;
}

// ---- events ----------------------------------------------------------------------------------

export type AgentEvent =
  | { readonly type: 'agent.cancel'; readonly reason?: string }
  | { readonly type: 'agent.approve'; readonly toolCallIds?: readonly string[] }
  | { readonly type: 'agent.reject'; readonly toolCallIds?: readonly string[]; readonly reason?: string }
  /** Model usage spent outside the reason phase (an MCP server's sampling request): added to the run's totals. */
  | { readonly type: 'agent.usage'; readonly usage: Usage; readonly costUsd: number };

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
  /** The validated final answer (see `AgentContext.output`). */
  readonly output?: unknown;
}
