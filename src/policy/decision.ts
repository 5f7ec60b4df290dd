/** Gates are user code, so what they return is checked against a schema before the loop acts on it. */
import { z } from 'zod';
import type { GateDecision } from './types.ts';

export const GateDecisionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('allow') }),
  z.object({ kind: z.literal('deny'), reason: z.string().min(1) }),
  z.object({
    kind: z.literal('modify'),
    arguments: z.unknown().refine((value) => value !== undefined, 'modified arguments are required'),
    reason: z.string().min(1),
  }),
  z.object({ kind: z.literal('confirm'), reason: z.string().min(1), arguments: z.unknown().optional() }),
]);

/** Shared and frozen, so allowing allocates nothing. */
export const ALLOW: GateDecision = Object.freeze({ kind: 'allow' });

export const decide = {
  allow: (): GateDecision => ALLOW,
  deny: (reason: string): GateDecision => ({ kind: 'deny', reason }),
  modify: (args: unknown, reason: string): GateDecision => ({ kind: 'modify', arguments: args, reason }),
  /** Ask a human first; `reason` is what they are asked about. */
  confirm: (reason: string): GateDecision => ({ kind: 'confirm', reason }),
} as const;

/** Extra keys dropped; undefined when `value` is not a decision. */
export function toGateDecision(value: unknown): GateDecision | undefined {
  if (value === ALLOW) return ALLOW; // our own constant: nothing to check on the hot path
  const parsed = GateDecisionSchema.safeParse(value);
  if (!parsed.success) return undefined;
  const decision = parsed.data;
  switch (decision.kind) {
    case 'allow':
      return ALLOW;
    case 'deny':
      return { kind: 'deny', reason: decision.reason };
    case 'modify':
      return { kind: 'modify', arguments: decision.arguments, reason: decision.reason };
    case 'confirm':
      return decision.arguments === undefined
        ? { kind: 'confirm', reason: decision.reason }
        : { kind: 'confirm', reason: decision.reason, arguments: decision.arguments };
  }
}
