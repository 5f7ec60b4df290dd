import { describe, expect, it } from 'vitest';
import { contentText, type Message } from '../../src/core/messages.ts';
import { createContextBudget } from '../../src/context/budget.ts';
import { estimateTokens } from '../../src/context/estimate.ts';
import { MASKED_RESULT_PREFIX } from '../../src/context/mask.ts';
import { SUMMARY_TAG } from '../../src/context/summary.ts';
import { DEFAULTS } from '../../src/core/defaults.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { hookContext, invariantViolations, toolRun } from './support.ts';

/** One conversation whose prefixes are the successive steps (same objects, as in a real run). */
const full = toolRun(24, 2_000);
const step = (turns: number): Message[] => full.slice(0, 2 + 2 * turns);
const promptOf = (request: { messages: readonly Message[] }): string => contentText(request.messages[1]?.content ?? '');
const textOf = (message: Message | undefined): string => contentText(message?.content ?? '');
const mentions = (prompt: string, turn: number) => prompt.includes(`data${turn}-data${turn}-`);

// Small summaries, so the 4 recent turns fit next to one: a summary is made every 4 steps.
const options = { tokenBudget: 4_000, summary: { maxTokens: 200 } } as const;

describe('anchored summary', () => {
  it('keeps system, the task and the 4 most recent turns, and puts one [CONVERSATION_SUMMARY] system message in place of the rest', async () => {
    const summarizer = scriptedModel(() => ({ text: 'Fetched c0–c3.' }));
    const { context, compacted } = hookContext();
    const input = step(8);
    const view = await createContextBudget({ strategy: 'anchoredSummary', summarizer, ...options })(input, context);
    expect(view.slice(0, 2)).toEqual(input.slice(0, 2));
    expect(view[2]?.role).toBe('system');
    expect(textOf(view[2]).startsWith(`${SUMMARY_TAG}\n`)).toBe(true);
    expect(view[2]?.content).toContain('Fetched c0–c3.');
    expect(view.slice(3)).toEqual(input.slice(-8));
    view.slice(3).forEach((m, i) => expect(m).toBe(input[input.length - 8 + i]));
    expect(view.filter((m) => textOf(m).startsWith(SUMMARY_TAG))).toHaveLength(1);
    expect(compacted()).toEqual([
      { type: 'context.compacted', strategy: 'anchoredSummary', tokensBefore: estimateTokens(input), tokensAfter: estimateTokens(view), messagesRemoved: 8 },
    ]);
    expect(invariantViolations(input, view)).toEqual([]);
  });

  it('summarises each span once: the summary is reused while it fits, then rolled forward over the newly aged turns only', async () => {
    let n = 0;
    const summarizer = scriptedModel(() => ({ text: `S${++n}` }));
    const budget = createContextBudget({ strategy: 'anchoredSummary', summarizer, ...options });
    const { context } = hookContext();
    const views: (readonly Message[])[] = [];
    for (let turns = 1; turns <= 20; turns++) views.push(await budget(step(turns), context));

    expect(summarizer.calls).toHaveLength(4); // at 8, 12, 16 and 20 turns
    const prompts = summarizer.calls.map(promptOf);
    for (let turn = 0; turn < 16; turn++) expect(prompts.filter((p) => mentions(p, turn))).toHaveLength(1);
    for (let turn = 16; turn < 20; turn++) expect(prompts.some((p) => mentions(p, turn))).toBe(false);
    // Rolling: the next request carries the summary so far, not the old turns.
    expect(prompts[0]).not.toContain('Summary so far');
    expect(prompts[1]).toContain('Summary so far:\n\nS1');
    // Steps between two summaries send the cached summary message (the same object).
    expect(views[8]?.[2]).toBe(views[9]?.[2]);
    expect(views[10]?.[2]?.content).toContain('S1');
    expect(views[11]?.[2]?.content).toContain('S2');
    for (const view of views) expect(estimateTokens(view)).toBeLessThanOrEqual(4_000);
  });

  it('asks the summariser with its instructions, the configured model and the summary token cap', async () => {
    const summarizer = scriptedModel([{ text: 'S' }]);
    const { context } = hookContext();
    await createContextBudget({ strategy: 'anchoredSummary', summarizer, tokenBudget: 4_000, summary: { model: 'cheap', maxTokens: 150 } })(step(8), context);
    expect(summarizer.calls[0]?.model).toBe('cheap');
    expect(summarizer.calls[0]?.maxTokens).toBe(150);
    expect(summarizer.calls[0]?.messages[0]?.role).toBe('system');
    expect(promptOf(summarizer.calls[0] as { messages: readonly Message[] })).toContain('[tool fetch#c0]');
  });

  it('by default reserves 1 024 tokens for the summary and brings the view under 60 % of the budget', async () => {
    expect(DEFAULTS.context.summaryMaxTokens).toBe(1_024);
    expect(DEFAULTS.context.summaryTargetRatio).toBe(0.6);
    const summarizer = scriptedModel(() => ({ text: 'S' }));
    const { context } = hookContext();
    const view = await createContextBudget({ strategy: 'anchoredSummary', summarizer, tokenBudget: 4_000 })(step(8), context);
    expect(summarizer.calls[0]?.maxTokens).toBe(1_024);
    // 4 recent turns (~2 050 tokens) + the 1 024 reserved would pass 2 400: only 2 are kept.
    expect(view.slice(3)).toEqual(step(8).slice(-4));
    expect(estimateTokens(view)).toBeLessThanOrEqual(0.6 * 4_000);
    // With the whole budget as target, all 4 recent turns stay.
    const roomy = await createContextBudget({ strategy: 'anchoredSummary', summarizer, tokenBudget: 4_000, summary: { targetRatio: 1 } })(step(8), context);
    expect(roomy.slice(3)).toEqual(step(8).slice(-8));
  });

  it('shows the summariser at most 4 000 characters of each message', async () => {
    expect(DEFAULTS.context.summaryMaxCharsPerMessage).toBe(4_000);
    const long = toolRun(10, 10_000);
    const summarizer = scriptedModel(() => ({ text: 'S' }));
    await createContextBudget({ strategy: 'anchoredSummary', summarizer, tokenBudget: 8_000 })(long, hookContext().context);
    const prompt = promptOf(summarizer.calls[0] as { messages: readonly Message[] });
    expect(prompt).toContain(`${(long[3]?.content ?? '').slice(0, 4_000)}… [6000 more chars]`);
    expect(prompt).not.toContain((long[3]?.content ?? '').slice(0, 4_001));
  });

  it('stops asking after 3 consecutive failures and falls back to masking', async () => {
    expect(DEFAULTS.context.maxSummaryFailures).toBe(3);
    const summarizer = scriptedModel(() => ({ error: () => new Error('summariser down') }));
    const budget = createContextBudget({ strategy: 'anchoredSummary', summarizer, ...options });
    const { context, compacted } = hookContext();
    for (let turns = 1; turns <= 20; turns++) {
      const view = await budget(step(turns), context);
      expect(estimateTokens(view)).toBeLessThanOrEqual(4_000);
      expect(view.some((m) => textOf(m).startsWith(SUMMARY_TAG))).toBe(false);
    }
    expect(summarizer.calls).toHaveLength(3);
    expect(compacted().length).toBeGreaterThan(0);
    expect(compacted().every((e) => e.strategy.startsWith('observationMasking'))).toBe(true);
  });

  it('counts failures consecutively: a success resets the count', async () => {
    // Fails, fails, succeeds, then fails for good.
    const summarizer = scriptedModel((_request, i) => (i === 2 ? { text: 'S' } : { error: new Error('flaky') }));
    const budget = createContextBudget({ strategy: 'anchoredSummary', summarizer, ...options, tokenBudget: 2_500 });
    const { context } = hookContext();
    for (let turns = 1; turns <= 24; turns++) await budget(step(turns), context);
    expect(summarizer.calls).toHaveLength(2 + 1 + 3);
  });

  it('keeps the last good summary while a newer one fails', async () => {
    const summarizer = scriptedModel((_request, i) => (i === 0 ? { text: 'first summary' } : { error: new Error('down') }));
    const budget = createContextBudget({ strategy: 'anchoredSummary', summarizer, ...options });
    const { context } = hookContext();
    await budget(step(8), context);
    const view = await budget(step(12), context);
    expect(summarizer.calls).toHaveLength(2);
    expect(view[2]?.content).toContain('first summary');
    expect(view.some((m) => m.role === 'tool' && m.content.startsWith(MASKED_RESULT_PREFIX))).toBe(true);
    expect(estimateTokens(view)).toBeLessThanOrEqual(4_000);
  });

  it('lets cancellation through without counting it as a failure', async () => {
    const controller = new AbortController();
    const summarizer = scriptedModel((_request, i) => (i === 0 ? { delayMs: 50, text: 'never' } : { text: 'S' }));
    const budget = createContextBudget({ strategy: 'anchoredSummary', summarizer, ...options, summary: { maxTokens: 200, maxFailures: 1 } });
    const pending = budget(step(8), hookContext('run_1', controller.signal).context);
    controller.abort(new Error('cancelled by user'));
    await expect(pending).rejects.toThrow('cancelled by user');
    const view = await budget(step(8), hookContext('run_1').context);
    expect(view[2]?.content).toContain('S');
    expect(summarizer.calls).toHaveLength(2);
  });

  it('keeps a summary per run and never applies one to a conversation it does not cover', async () => {
    let n = 0;
    const summarizer = scriptedModel(() => ({ text: `S${++n}` }));
    const budget = createContextBudget({ strategy: 'anchoredSummary', summarizer, ...options });
    await budget(step(8), hookContext('run_a').context);
    const other = toolRun(8, 2_000); // equal text, other objects: another run's conversation
    const viewB = await budget(other, hookContext('run_b').context);
    expect(viewB[2]?.content).toContain('S2');
    // The same run id with a conversation the summary does not cover: summarised afresh.
    const viewA = await budget(other, hookContext('run_a').context);
    expect(summarizer.calls).toHaveLength(3);
    expect(promptOf(summarizer.calls[2] as { messages: readonly Message[] })).not.toContain('Summary so far');
    expect(viewA[2]?.content).toContain('S3');
  });
});
