// Strategies are user code: a malformed decision fails the run with a message naming the fix, not confusing the machine.
import { z } from 'zod';
import type { StrategyDecision } from '../core/strategy.ts';
import { ConfigurationError } from '../core/errors.ts';

const Metadata = z.record(z.string(), z.unknown());

export const ThoughtSchema = z.object({
  id: z.string().min(1),
  content: z.string(),
  parentId: z.string().optional(),
  score: z.number().refine(Number.isFinite, 'score must be a finite number').optional(),
  metadata: Metadata.optional(),
});

export const BranchSchema = z.object({
  id: z.string().min(1),
  prompt: z.string().refine((s) => s.trim() !== '', 'a branch prompt must not be blank'),
  parentId: z.string().optional(),
  metadata: Metadata.optional(),
});

const detail = z.string().optional();

export const DecisionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('continue'), thought: ThoughtSchema, state: z.unknown(), detail }),
  z.object({ kind: z.literal('branch'), branches: z.array(BranchSchema), state: z.unknown(), detail }),
  z.object({ kind: z.literal('revise'), feedback: z.string(), state: z.unknown(), detail }),
  z.object({ kind: z.literal('done'), answer: z.string(), state: z.unknown(), detail }),
  z.object({ kind: z.literal('error'), reason: z.string(), state: z.unknown(), detail }),
]);

/** Returns the decision unchanged, so the private state keeps its identity. */
export function checkDecision(value: unknown, strategy: string, method: 'step' | 'aggregate'): StrategyDecision<unknown> {
  const parsed = DecisionSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(decision)'}: ${i.message}`).join('; ');
    throw new ConfigurationError(
      `Strategy "${strategy}" returned an invalid decision from ${method}(): ${issues}. ` +
        "Return one of { kind: 'continue', thought }, { kind: 'branch', branches }, { kind: 'revise', feedback }, { kind: 'done', answer } or { kind: 'error', reason }, each with its `state`.",
      { code: 'invalid_decision' },
    );
  }
  if (parsed.data.kind === 'branch') {
    const seen = new Set<string>();
    for (const branch of parsed.data.branches) {
      if (seen.has(branch.id)) {
        throw new ConfigurationError(`Strategy "${strategy}" returned two branches with the id "${branch.id}" from ${method}(): give every branch of a fan-out its own id.`, {
          code: 'invalid_decision',
        });
      }
      seen.add(branch.id);
    }
  }
  return value as StrategyDecision<unknown>;
}
