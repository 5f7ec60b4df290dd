/**
 * Building and validating gate decisions. Gates are user code, so what they return is checked
 * against a schema before the loop acts on it.
 */
import { z } from 'zod';
import type { GateDecision } from './types.ts';

/**
 * The schema of a {@link GateDecision}: `allow`, `deny` with a non-empty reason, `modify`
 * with arguments (present, not `undefined`) and a non-empty reason, or `confirm` with a
 * non-empty reason (and, optionally, the arguments a human confirms).
 *
 * @example
 * ```ts
 * GateDecisionSchema.safeParse({ kind: 'deny' }).success; // false — a denial needs a reason
 * ```
 */
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

/**
 * The one `allow` decision; shared and frozen so allowing allocates nothing.
 *
 * @example
 * ```ts
 * const gate = { name: 'open', evaluate: () => ALLOW };
 * ```
 */
export const ALLOW: GateDecision = Object.freeze({ kind: 'allow' });

/**
 * Decision constructors for gate authors.
 *
 * @example
 * ```ts
 * const gate = gates.fromFunction('no-rm', (action) =>
 *   action.tool === 'rm' ? decide.deny('rm is never allowed here') : decide.allow());
 * const ask = gates.fromFunction('ask-before-send', (action) =>
 *   action.tool === 'send_email' ? decide.confirm('The model wants to send an email.') : decide.allow());
 * ```
 */
export const decide = {
  allow: (): GateDecision => ALLOW,
  deny: (reason: string): GateDecision => ({ kind: 'deny', reason }),
  modify: (args: unknown, reason: string): GateDecision => ({ kind: 'modify', arguments: args, reason }),
  /** Ask a human first; `reason` is what they are asked about. */
  confirm: (reason: string): GateDecision => ({ kind: 'confirm', reason }),
} as const;

/**
 * `value` as a clean GateDecision (extra keys dropped), or undefined when it is not one.
 *
 * @example
 * ```ts
 * toGateDecision({ kind: 'allow', extra: 1 }); // { kind: 'allow' }
 * toGateDecision('yes');                       // undefined
 * ```
 */
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
