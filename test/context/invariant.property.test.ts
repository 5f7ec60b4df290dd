/**
 * The context budget's invariants over random conversations (parallel tool calls, results in
 * any order, injected system messages, follow-up user messages), random budgets and every
 * strategy — with a summariser that fails at random.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/core/messages.ts';
import { validateConversation } from '../../src/conversation/validate.ts';
import { createContextBudget, type ContextStrategy } from '../../src/context/budget.ts';
import { createTokenCounter, estimateTokens } from '../../src/context/estimate.ts';
import { SUMMARY_TAG } from '../../src/context/summary.ts';
import { groupTurns } from '../../src/context/turns.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { assistant, call, filler, hookContext, invariantViolations, result, sys, user } from './support.ts';

const turnArb = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('tools' as const), sizes: fc.array(fc.nat({ max: 3_000 }), { minLength: 1, maxLength: 4 }), order: fc.array(fc.nat(), { minLength: 4, maxLength: 4 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('text' as const), size: fc.nat({ max: 800 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('user' as const), size: fc.nat({ max: 400 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('system' as const), size: fc.nat({ max: 200 }) }) },
);
type Turn = typeof turnArb extends fc.Arbitrary<infer T> ? T : never;

function build(withSystem: boolean, turns: readonly Turn[]): Message[] {
  const messages: Message[] = withSystem ? [sys('You are precise.')] : [];
  messages.push(user('The task.'));
  turns.forEach((turn, t) => {
    if (turn.kind === 'tools') {
      const ids = turn.sizes.map((_, i) => `c${t}_${i}`);
      messages.push(assistant(ids.map((id, i) => call(id, i % 2 === 0 ? 'fetch' : 'read'))));
      const order = ids.map((id, i) => ({ id, size: turn.sizes[i] as number, key: turn.order[i] ?? 0 })).sort((a, b) => a.key - b.key);
      for (const { id, size } of order) messages.push(result(id, filler(size, t)));
    } else if (turn.kind === 'text') {
      messages.push(assistant(null, filler(turn.size, t)));
    } else if (turn.kind === 'user') {
      messages.push(user(filler(turn.size, t)));
    } else {
      messages.push(sys(`[KNOWLEDGE_CONTEXT] ${filler(turn.size, t)}`));
    }
  });
  return messages;
}

const strategies: readonly ContextStrategy[] = ['slidingWindow', 'observationMasking', 'anchoredSummary'];

const caseArb = fc.record({
  withSystem: fc.boolean(),
  turns: fc.array(turnArb, { minLength: 0, maxLength: 14 }),
  strategy: fc.constantFrom(...strategies),
  budgetFraction: fc.double({ min: 0.01, max: 1.2, noNaN: true }),
  keepRecent: fc.integer({ min: 1, max: 5 }),
  failures: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
  steps: fc.integer({ min: 1, max: 4 }),
});

describe('context budget invariants (property)', () => {
  it('never separates a call from its results, keeps the anchors, and fits whenever fitting is possible', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const messages = build(c.withSystem, c.turns);
        const budget = Math.max(1, Math.floor(estimateTokens(messages) * c.budgetFraction));
        const summarizer = scriptedModel((_request, i) => (c.failures[i % c.failures.length] === true ? { error: new Error('down') } : { text: `summary ${i}` }));
        const prepare = createContextBudget(
          c.strategy === 'anchoredSummary'
            ? { strategy: c.strategy, summarizer, tokenBudget: budget, keepRecent: c.keepRecent, summary: { maxTokens: 50 } }
            : { strategy: c.strategy, tokenBudget: budget, keepRecent: c.keepRecent },
        );
        // Several steps over growing prefixes of the same objects, as a run would send them.
        for (let s = 1; s <= c.steps; s++) {
          const input = messages.slice(0, Math.ceil((messages.length * s) / c.steps));
          const { context, compacted } = hookContext();
          const view = await prepare(input, context);

          expect(invariantViolations(input, view)).toEqual([]);
          expect(validateConversation(view).ok).toBe(true);
          const after = estimateTokens(view);
          const turns = groupTurns(input, createTokenCounter());
          const newest = turns.unpinned[turns.unpinned.length - 1];
          // The newest turn (what the model asked for last) always goes through untouched.
          input.forEach((m, i) => {
            if (turns.turnOf[i] === newest) expect(view).toContain(m);
          });
          if (after > budget) {
            // Over budget only when nothing removable is left: pinned messages and the newest turn.
            const kept = new Set(view);
            const answered = new Set(view.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])));
            input.forEach((m, i) => {
              const turn = turns.turnOf[i] as number;
              if (turns.pinned[turn] || turn === newest) return;
              expect(kept.has(m)).toBe(false);
              if (m.role === 'tool') expect(answered.has(m.toolCallId)).toBe(false);
            });
          }
          const events = compacted();
          if (view === input) {
            expect(events).toEqual([]);
          } else {
            const kept = new Set(view);
            expect(events).toEqual([
              {
                type: 'context.compacted',
                strategy: expect.any(String) as string,
                tokensBefore: estimateTokens(input),
                tokensAfter: after,
                messagesRemoved: input.filter((m) => !kept.has(m)).length,
              },
            ]);
            const summarised = view.some((m) => m.role === 'system' && m.content.startsWith(SUMMARY_TAG));
            expect(events[0]?.strategy.includes('anchoredSummary')).toBe(summarised);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
