import { describe, expect, it } from 'vitest';
import type { Message, ToolMessage } from '../../src/core/messages.ts';
import { createContextBudget, type ContextBudgetOptions } from '../../src/context/budget.ts';
import { estimateTokens } from '../../src/context/estimate.ts';
import { MASKED_RESULT_PREFIX, maskedResultText } from '../../src/context/mask.ts';
import { DEFAULTS } from '../../src/core/defaults.ts';
import { ConfigurationError } from '../../src/core/errors.ts';
import { assistant, call, filler, hookContext, invariantViolations, result, sys, toolRun, user } from './support.ts';

const prepare = async (options: ContextBudgetOptions, messages: readonly Message[]) => {
  const recording = hookContext();
  const view = await createContextBudget(options)(messages, recording.context);
  return { view, ...recording };
};
const tools = (messages: readonly Message[]) => messages.filter((m): m is ToolMessage => m.role === 'tool');

describe('context budget', () => {
  it('returns the very same array and emits nothing while the conversation fits', async () => {
    const messages = toolRun(5, 1_000);
    const { view, events } = await prepare({ tokenBudget: estimateTokens(messages) }, messages);
    expect(view).toBe(messages);
    expect(events).toEqual([]);
  });

  it('defaults to a 32 000-token budget', async () => {
    expect(DEFAULTS.context.tokenBudget).toBe(32_000);
    let turns = 1;
    while (estimateTokens(toolRun(turns + 1, 4_000)) <= 32_000) turns++;
    const fits = toolRun(turns, 4_000);
    expect((await prepare({}, fits)).view).toBe(fits);
    const over = toolRun(turns + 1, 4_000);
    const { view, compacted } = await prepare({}, over);
    expect(view).not.toBe(over);
    expect(estimateTokens(view)).toBeLessThanOrEqual(32_000);
    expect(compacted()[0]?.tokensBefore).toBe(estimateTokens(over));
  });

  it('defaults to observation masking that leaves the 4 most recent turns intact', async () => {
    expect(DEFAULTS.context.keepRecent).toBe(4);
    const messages = toolRun(12, 4_000);
    const { view, compacted } = await prepare({ tokenBudget: 8_000 }, messages);
    expect(view).toHaveLength(messages.length);
    const results = tools(view);
    expect(results.slice(-4).every((m) => !m.content.startsWith(MASKED_RESULT_PREFIX))).toBe(true);
    expect(results[0]?.content.startsWith(MASKED_RESULT_PREFIX)).toBe(true);
    expect(compacted()[0]?.strategy).toBe('observationMasking');
  });

  describe('slidingWindow', () => {
    it('drops the oldest turns whole and keeps system, the task and the most recent turns', async () => {
      const messages = toolRun(10, 4_000);
      const { view, compacted } = await prepare({ strategy: 'slidingWindow', tokenBudget: 5_000 }, messages);
      expect(view.slice(0, 2)).toEqual(messages.slice(0, 2));
      expect(view[0]).toBe(messages[0]);
      // What is kept is a contiguous tail of turns, as the original objects.
      const tail = view.slice(2);
      expect(tail).toEqual(messages.slice(messages.length - tail.length));
      tail.forEach((m, i) => expect(m).toBe(messages[messages.length - tail.length + i]));
      expect(tail[0]?.role).toBe('assistant');
      expect(estimateTokens(view)).toBeLessThanOrEqual(5_000);
      // One more turn would not have fitted.
      expect(estimateTokens(messages.slice(0, 2)) + estimateTokens(messages.slice(-(tail.length + 2)))).toBeGreaterThan(5_000);
      expect(compacted()).toEqual([
        {
          type: 'context.compacted',
          strategy: 'slidingWindow',
          tokensBefore: estimateTokens(messages),
          tokensAfter: estimateTokens(view),
          messagesRemoved: messages.length - view.length,
        },
      ]);
    });

    it('removes parallel tool calls together with all their results', async () => {
      const parallel = [assistant([call('p1'), call('p2'), call('p3')]), result('p1', filler(3_000)), result('p2', filler(3_000)), result('p3', filler(3_000))];
      const messages = [sys('s'), user('task'), ...parallel, assistant([call('z')]), result('z', filler(400))];
      const { view } = await prepare({ strategy: 'slidingWindow', tokenBudget: 1_500 }, messages);
      expect(view).toEqual([messages[0], messages[1], ...messages.slice(-2)]);
      expect(invariantViolations(messages, view)).toEqual([]);
    });

    it('keeps every system message and the latest user message wherever they stand', async () => {
      const knowledge = sys('[KNOWLEDGE_CONTEXT] facts');
      const followUp = user('And now summarise.');
      const messages = [sys('s'), user('task'), ...toolRun(4, 2_000).slice(2, 6), knowledge, followUp, ...toolRun(4, 2_000).slice(6)];
      const { view } = await prepare({ strategy: 'slidingWindow', tokenBudget: 1_200 }, messages);
      expect(view).toContain(knowledge);
      expect(view).toContain(followUp);
      expect(invariantViolations(messages, view)).toEqual([]);
    });

    it('keeps the newest turn even when it alone is over budget, and says so in the event', async () => {
      const messages = toolRun(3, 8_000);
      const { view, compacted } = await prepare({ strategy: 'slidingWindow', tokenBudget: 1_000 }, messages);
      expect(view).toEqual([...messages.slice(0, 2), ...messages.slice(-2)]);
      expect(compacted()[0]?.tokensAfter).toBe(estimateTokens(view));
      expect(compacted()[0]?.tokensAfter).toBeGreaterThan(1_000);
      expect(compacted()[0]?.messagesRemoved).toBe(4);
    });
  });

  describe('observationMasking', () => {
    it('masks the oldest results first, only as many as needed, naming the tool and the size removed', async () => {
      const messages = toolRun(10, 4_000);
      const budget = estimateTokens(messages) - 2_500; // needs three results masked
      const { view, compacted } = await prepare({ strategy: 'observationMasking', tokenBudget: budget }, messages);
      const results = tools(view);
      expect(results.map((m) => m.content.startsWith(MASKED_RESULT_PREFIX))).toEqual([true, true, true, false, false, false, false, false, false, false]);
      expect(results[0]?.content).toBe(maskedResultText('fetch', 4_000));
      expect(results[0]?.content).toContain('"fetch" returned 4000 chars');
      expect(results[0]?.toolCallId).toBe('c0');
      expect(estimateTokens(view)).toBeLessThanOrEqual(budget);
      expect(compacted()[0]).toMatchObject({ strategy: 'observationMasking', messagesRemoved: 3, tokensAfter: estimateTokens(view) });
    });

    it('takes the tool name from the call when the result has none', async () => {
      const messages = [sys('s'), user('task'), assistant([call('a', 'read_file')]), result('a', filler(4_000)), ...toolRun(4, 100).slice(2)];
      const { view } = await prepare({ strategy: 'observationMasking', tokenBudget: 500 }, messages);
      expect(tools(view)[0]?.content).toBe(maskedResultText('read_file', 4_000));
    });

    it('never masks the most recent keepRecent turns; drops the oldest turns when masking is not enough', async () => {
      const messages = toolRun(10, 4_000);
      const { view, compacted } = await prepare({ strategy: 'observationMasking', tokenBudget: 2_200, keepRecent: 2 }, messages);
      const results = tools(view);
      expect(results.slice(-2).map((m) => m.content.length)).toEqual([4_000, 4_000]);
      expect(results.slice(0, -2).every((m) => m.content.startsWith(MASKED_RESULT_PREFIX))).toBe(true);
      expect(estimateTokens(view)).toBeLessThanOrEqual(2_200);
      expect(view.length).toBeLessThan(messages.length);
      expect(compacted()[0]?.strategy).toBe('observationMasking+slidingWindow');
      expect(invariantViolations(messages, view)).toEqual([]);
    });

    it('reuses message objects and the same masked stand-in from one step to the next', async () => {
      const budget = createContextBudget({ tokenBudget: 6_000 });
      const { context } = hookContext();
      const messages = toolRun(10, 4_000);
      const first = await budget(messages, context);
      const second = await budget([...messages, assistant([call('n')]), result('n', 'short')], context);
      const maskedFirst = first.find((m) => m.role === 'tool' && m.content.startsWith(MASKED_RESULT_PREFIX));
      expect(second).toContain(maskedFirst);
      for (const m of second) if (!(m.role === 'tool' && m.content.startsWith(MASKED_RESULT_PREFIX))) expect(messages.concat(second.slice(-2))).toContain(m);
    });
  });

  it('measures with the tokenizer it is given', async () => {
    const messages = toolRun(4, 400);
    expect((await prepare({ tokenBudget: 1_000 }, messages)).view).toBe(messages);
    // One token per character: the same conversation is now far over budget.
    const { view } = await prepare({ tokenBudget: 1_000, tokenizer: (text) => text.length }, messages);
    expect(view).not.toBe(messages);
  });

  it.each<[string, unknown]>([
    ['an unknown strategy', { strategy: 'truncate' }],
    ['a zero budget', { tokenBudget: 0 }],
    ['a NaN budget', { tokenBudget: Number.NaN }],
    ['a fractional keepRecent', { keepRecent: 1.5 }],
    ['keepRecent 0', { keepRecent: 0 }],
    ['a non-function tokenizer', { tokenizer: 4 }],
    ['anchoredSummary without a summarizer', { strategy: 'anchoredSummary' }],
  ])('rejects %s with a ConfigurationError', (_label, options) => {
    expect(() => createContextBudget(options as ContextBudgetOptions)).toThrow(ConfigurationError);
  });
});
