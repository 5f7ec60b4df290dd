/**
 * The context budget inside a real loop: 200 iterations of large tool outputs through
 * createAgent, checked request by request from what the scripted model received.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, type Agent } from '../../src/agent/createAgent.ts';
import type { Message } from '../../src/core/messages.ts';
import { unansweredToolCalls, validateConversation } from '../../src/conversation/validate.ts';
import type { ContextBudgetOptions } from '../../src/context/budget.ts';
import { estimateTokens } from '../../src/context/estimate.ts';
import { SUMMARY_TAG } from '../../src/context/summary.ts';
import type { JournalEntry, LoopEventOf } from '../../src/core/loopEvent.ts';
import { scriptedModel, type ScriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { filler, invariantViolations } from './support.ts';

const ITERATIONS = 200;
const STRATEGY = /^(anchoredSummary|observationMasking|slidingWindow)(\+(observationMasking|slidingWindow))*$/u;
const BUDGET = 8_000;
/** 3–8 KB per output, varying with the call. */
const sizeOf = (n: number, k: number) => 3_000 + ((n * 7_919 + k * 104_729) % 5_001);

const fetchTool = defineTool({
  name: 'fetch',
  description: 'Fetch a page',
  input: z.object({ n: z.number(), k: z.number() }),
  execute: ({ n, k }) => filler(sizeOf(n, k), n),
});

const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
});

/** Tool calls for 200 iterations (every third one two calls in parallel), then an answer. */
function longRunModel(): ScriptedModel {
  return scriptedModel((_request, i) =>
    i < ITERATIONS
      ? { toolCalls: Array.from({ length: i % 3 === 0 ? 2 : 1 }, (_, k) => ({ name: 'fetch', arguments: { n: i, k } })) }
      : { text: 'All pages fetched.' },
  );
}

async function longRun(options: ContextBudgetOptions | undefined) {
  const model = longRunModel();
  const agent = createAgent({
    model,
    system: 'You fetch pages.',
    tools: [fetchTool],
    resilience: { breakers: false },
    limits: { maxIterations: ITERATIONS + 5, maxTotalTokens: 1e12, timeoutMs: 120_000 },
    ...(options === undefined ? {} : { context: { budget: options } }),
  });
  agents.push(agent);
  const entries: JournalEntry[] = [];
  agent.events$.subscribe((entry) => entries.push(entry));
  const result = await agent.run('Fetch every page.');
  const compacted = entries.flatMap((e) => (e.event.type === 'context.compacted' ? [{ iteration: e.iteration, event: e.event }] : []));
  return { model, result, compacted };
}

/** The stored conversation when request `i` was made: everything before the i-th assistant reply. */
function storedBefore(messages: readonly Message[], i: number): readonly Message[] {
  let seen = 0;
  for (let at = 0; at < messages.length; at++) {
    if (messages[at]?.role === 'assistant' && seen++ === i) return messages.slice(0, at);
  }
  return messages;
}

describe('context budget in a 200-iteration run', () => {
  it.each<[string, () => ContextBudgetOptions]>([
    ['slidingWindow', () => ({ strategy: 'slidingWindow', tokenBudget: BUDGET })],
    ['observationMasking', () => ({ strategy: 'observationMasking', tokenBudget: BUDGET })],
    [
      'anchoredSummary',
      () => ({
        strategy: 'anchoredSummary',
        tokenBudget: BUDGET,
        summarizer: scriptedModel((_r, i) => ({ text: `Pages up to batch ${i} fetched; nothing failed.` })),
        summary: { maxTokens: 300 },
      }),
    ],
  ])('%s keeps every request within budget and every call with its results', async (strategy, makeOptions) => {
    const options = makeOptions();
    const { model, result, compacted } = await longRun(options);
    expect(result.status).toBe('done');
    expect(model.calls).toHaveLength(ITERATIONS + 1);
    expect(estimateTokens(result.messages)).toBeGreaterThan(40 * BUDGET);

    for (let i = 0; i < model.calls.length; i++) {
      const sent = (model.calls[i] as { messages: readonly Message[] }).messages;
      const stored = storedBefore(result.messages, i);
      expect(estimateTokens(sent)).toBeLessThanOrEqual(BUDGET);
      expect(validateConversation(sent).ok).toBe(true);
      expect(unansweredToolCalls(sent)).toEqual([]);
      expect(invariantViolations(stored, sent)).toEqual([]);
      // The newest results always reach the model intact.
      expect(sent[sent.length - 1]).toBe(stored[stored.length - 1]);
    }

    // One event for each request whose stored conversation was over budget, none for the others.
    const over = model.calls.flatMap((_call, i) => (estimateTokens(storedBefore(result.messages, i)) > BUDGET ? [i] : []));
    expect(over.length).toBeGreaterThan(ITERATIONS - 20);
    expect(compacted.map((c) => c.iteration)).toEqual(over);
    for (let i = 0; i < (over[0] ?? 0); i++) expect(model.calls[i]?.messages).toEqual(storedBefore(result.messages, i));
    for (const { iteration, event } of compacted) {
      const sent = (model.calls[iteration] as { messages: readonly Message[] }).messages;
      const stored = storedBefore(result.messages, iteration);
      const kept = new Set(sent);
      expect(event).toEqual<LoopEventOf<'context.compacted'>>({
        type: 'context.compacted',
        strategy: (strategy === 'slidingWindow' ? 'slidingWindow' : expect.stringMatching(STRATEGY)) as string,
        tokensBefore: estimateTokens(stored),
        tokensAfter: estimateTokens(sent),
        messagesRemoved: stored.filter((m) => !kept.has(m)).length,
      });
    }

    if (options.strategy === 'anchoredSummary') {
      const summarizer = options.summarizer as ScriptedModel;
      // Cached and rolled: far fewer summaries than compacted requests, each request carries one.
      expect(summarizer.calls.length).toBeGreaterThan(0);
      expect(summarizer.calls.length).toBeLessThan(compacted.length / 2);
      const last = (model.calls[ITERATIONS] as { messages: readonly Message[] }).messages;
      expect(last.filter((m) => m.role === 'system' && m.content.startsWith(SUMMARY_TAG))).toHaveLength(1);
    }
  });

  it('changes nothing when the conversation fits the budget', async () => {
    const model = scriptedModel([{ toolCalls: [{ name: 'fetch', arguments: { n: 1, k: 0 } }] }, { text: 'done' }]);
    const agent = createAgent({ model, tools: [fetchTool], context: { budget: {} } });
    agents.push(agent);
    const entries: JournalEntry[] = [];
    agent.events$.subscribe((entry) => entries.push(entry));
    const result = await agent.run('Fetch one page.');
    expect(model.calls[1]?.messages).toEqual(result.messages.slice(0, -1));
    expect(entries.some((e) => e.event.type === 'context.compacted')).toBe(false);
  });
});
