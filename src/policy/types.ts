import type { Message } from '../core/messages.ts';

/** A tool call the model proposed, after its arguments parsed and validated. */
export interface ProposedAction {
  readonly toolCallId: string;
  readonly tool: string;
  readonly arguments: unknown;
  readonly permissions: readonly string[];
}

/** `confirm` waits for a human, asking `reason`; its `arguments` are what runs once approved, so an earlier gate's modification survives. */
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
