/**
 * The policy gate contract: every proposed tool call is allowed, denied (the reason goes back to
 * the model), modified (the modified arguments are what runs) or sent to a human to confirm.
 */
import type { Message } from '../core/messages.ts';

/** A tool call the model proposed, after its arguments parsed and validated. */
export interface ProposedAction {
  readonly toolCallId: string;
  readonly tool: string;
  readonly arguments: unknown;
  /** The tool's declared permissions (empty for tools that declare none). */
  readonly permissions: readonly string[];
}

/**
 * What a gate decides for one call. `confirm` makes the run wait in `awaitingHuman` (like a
 * `requiresConfirmation` tool) with `reason` as what the human is asked; approving runs the call,
 * rejecting tells the model. Its `arguments`, when given, are what runs once approved: a chain
 * in which one gate modified the call and another asks keeps the modification.
 */
export type GateDecision =
  | { readonly kind: 'allow' }
  | { readonly kind: 'deny'; readonly reason: string }
  | { readonly kind: 'modify'; readonly arguments: unknown; readonly reason: string }
  | { readonly kind: 'confirm'; readonly reason: string; readonly arguments?: unknown };

export interface GateContext {
  readonly runId: string;
  readonly agentId: string;
  readonly iteration: number;
  readonly messages: readonly Message[];
  /** Set once the run read untrusted content: where it came from. */
  readonly taint?: { readonly source: string };
}

/** A policy gate. `evaluate` may be sync or async; throwing counts as a denial (fail closed). */
export interface PolicyGate {
  readonly name: string;
  evaluate(action: ProposedAction, context: GateContext): GateDecision | Promise<GateDecision>;
}
