/**
 * One result type: an agent run, a system ask and a strategy run all resolve with a `RunResult`,
 * whose fields have the same names and meanings whichever kind of run produced it, and a
 * strategy's usage and cost are those of its sub-agent runs, summed.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/agent/createAgent.ts';
import { JournalEntry, TerminationReason, type LoopEventOf } from '../../src/core/loopEvent.ts';
import type { Completion, CompletionRequest, InferenceProvider, StreamEvent, Usage } from '../../src/core/provider.ts';
import type { LoopResult, RunResult } from '../../src/core/run.ts';
import type { ReasoningStrategy } from '../../src/core/strategy.ts';
import { runStrategy, startStrategy, strategies, type StrategyResult } from '../../src/strategies/index.ts';
import { createAgentSystem } from '../../src/system/createAgentSystem.ts';
import { scriptedModel, type ScriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';

/** `model`, with every completion priced at `costUsd` (scriptedModel does not price). */
function priced(model: ScriptedModel, costUsd: number): InferenceProvider {
  return {
    name: model.name,
    defaultModel: model.defaultModel,
    supportsNativeTools: model.supportsNativeTools,
    supportsStructuredOutput: model.supportsStructuredOutput,
    async complete<T>(request: CompletionRequest<T>): Promise<Completion<T>> {
      return { ...(await model.complete(request)), costUsd };
    },
    async *stream<T>(request: CompletionRequest<T>): AsyncIterable<StreamEvent<T>> {
      for await (const event of model.stream(request)) yield event.type === 'done' ? { ...event, completion: { ...event.completion, costUsd } } : event;
    },
  };
}

const USAGE = { promptTokens: 3, completionTokens: 2, totalTokens: 5 } as const;
const answers42 = () => priced(scriptedModel(() => ({ text: '42', usage: USAGE })), 0.01);

const UsageShape = z.object({ promptTokens: z.number(), completionTokens: z.number(), totalTokens: z.number() }).strict();
/** `RunResult` at runtime: the fields every kind of run has, with their types. */
const RunResultShape = z.object({
  runId: z.string().min(1),
  agentId: z.string().min(1),
  status: z.enum(['done', 'failed', 'cancelled']),
  reason: TerminationReason,
  text: z.string().nullable(),
  iterations: z.number().int().nonnegative(),
  usage: UsageShape,
  costUsd: z.number().nonnegative(),
  durationMs: z.number().nonnegative(),
});

/**
 * The `RunResult` part of a result. Taking a `RunResult` is the type-level half of the proof:
 * a `LoopResult` and a `StrategyResult` are passed here without a cast.
 */
function common(result: RunResult): Record<string, unknown> {
  const { runId, agentId, status, reason, text, iterations, usage, costUsd } = result;
  expect(RunResultShape.safeParse(result).success, JSON.stringify(RunResultShape.safeParse(result).error?.issues)).toBe(true);
  return { runId, agentId, status, reason, text, iterations, usage, costUsd };
}

/** The `run.terminated` entry of `runId` in `events`. */
function terminatedOf(events: readonly JournalEntry[], runId: string): LoopEventOf<'run.terminated'> {
  const entry = events.find((e) => e.runId === runId && e.event.type === 'run.terminated');
  if (entry?.event.type !== 'run.terminated') throw new Error(`no run.terminated for ${runId}`);
  return entry.event;
}

const sum = (usages: readonly Usage[]): Usage =>
  usages.reduce((a, u) => ({ promptTokens: a.promptTokens + u.promptTokens, completionTokens: a.completionTokens + u.completionTokens, totalTokens: a.totalTokens + u.totalTokens }), {
    promptTokens: 0,
    completionTokens: 0,
    totalTokens: 0,
  });

describe('RunResult: one result for agent, system and strategy runs', () => {
  it('an agent run, a system ask and a strategy run resolve with the same fields, meaning the same', async () => {
    const agent = createAgent({ id: 'solo', model: answers42() });
    const system = createAgentSystem();
    try {
      system.spawn('b', { model: answers42() });
      const ran: LoopResult = await agent.run('What is 6 * 7?');
      const asked: LoopResult = await system.ask('b', 'What is 6 * 7?');
      const voted: StrategyResult = await runStrategy({ strategy: strategies.vote({ samples: 3 }), task: 'What is 6 * 7?', subAgent: { model: answers42() } });

      // One model call each for the agents; two decisions (branch, then aggregate) for the vote.
      expect(common(ran)).toEqual({ runId: ran.runId, agentId: 'solo', status: 'done', reason: 'final_answer', text: '42', iterations: 1, usage: USAGE, costUsd: 0.01 });
      expect(common(asked)).toEqual({ runId: asked.runId, agentId: 'b', status: 'done', reason: 'final_answer', text: '42', iterations: 1, usage: USAGE, costUsd: 0.01 });
      expect(common(voted)).toEqual({
        runId: voted.runId,
        agentId: 'strategy_vote',
        status: 'done',
        reason: 'final_answer',
        text: '42',
        iterations: 2,
        usage: sum([USAGE, USAGE, USAGE]),
        costUsd: expect.closeTo(0.03, 10) as unknown,
      });
      // Same names, no leftovers of the strategy's old ones.
      expect(voted).not.toHaveProperty('answer');
      expect(voted).not.toHaveProperty('rounds');
      // `reason` and `iterations` are those of the run's own `run.terminated` entry, for every kind of run.
      expect(terminatedOf(agent.journal.entries(ran.runId), ran.runId)).toMatchObject({ reason: ran.reason, iterations: ran.iterations, usage: ran.usage });
      expect(terminatedOf(system.get('b').agent.journal.entries(asked.runId), asked.runId)).toMatchObject({ reason: asked.reason, iterations: asked.iterations });
      expect(terminatedOf(voted.events, voted.runId)).toMatchObject({ reason: voted.reason, iterations: voted.iterations, usage: voted.usage });
      // A strategy's events are the journal entries agents and systems emit, its own under its agentId.
      for (const entry of voted.events) expect(JournalEntry.safeParse(entry).success).toBe(true);
      expect(voted.events.filter((e) => e.runId === voted.runId).every((e) => e.agentId === voted.agentId)).toBe(true);
    } finally {
      system.stopAll();
      agent.stop();
    }
  });

  it("takes a strategy's agentId from the runner's `agentId` option", async () => {
    const result = await runStrategy({ strategy: strategies.vote({ samples: 1 }), task: 'q', subAgent: { model: answers42() }, agentId: 'lead' });
    expect(result.agentId).toBe('lead');
  });

  it("sums a strategy's usage and cost over its sub-agent runs", async () => {
    const add = defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });
    // Branch i: a tool call then an answer, each call costing (i + 1) cents and using i + 1 prompt tokens.
    const usageOf = (i: number) => ({ promptTokens: i + 1, completionTokens: 1, totalTokens: i + 2 });
    const result = await runStrategy({
      strategy: strategies.vote({ samples: 3 }),
      task: 'What is 40 + 2?',
      subAgent: (_branch, { index }) => ({
        model: priced(scriptedModel([{ toolCalls: [{ name: 'add', arguments: { a: 40, b: 2 } }], usage: usageOf(index) }, { text: '42', usage: usageOf(index) }]), (index + 1) / 100),
        tools: [add],
      }),
    });
    expect(result.status).toBe('done');
    const subRuns = [...new Set(result.events.filter((e) => e.runId !== result.runId).map((e) => e.runId))];
    expect(subRuns).toHaveLength(3);
    const subTerminated = subRuns.map((runId) => terminatedOf(result.events, runId));
    expect(subTerminated.map((t) => t.iterations)).toEqual([2, 2, 2]);
    // Each sub-agent's usage as its run reported it, summed: the strategy's (no direct model calls here).
    expect(result.usage).toEqual(sum(subTerminated.map((t) => t.usage)));
    expect(result.usage).toEqual(sum([0, 1, 2].flatMap((i) => [usageOf(i), usageOf(i)])));
    expect(result.costUsd).toBeCloseTo(2 * (0.01 + 0.02 + 0.03), 10);
  });

  it('ends a failed or cancelled strategy run with the reasons and statuses an agent run uses', async () => {
    const echo = defineTool({ name: 'echo', description: 'Echo', input: z.object({ v: z.string() }), execute: ({ v }) => v });
    const agent = createAgent({ model: scriptedModel(() => ({ toolCalls: [{ name: 'echo', arguments: { v: 'again' } }] })), tools: [echo], limits: { maxIterations: 3 } });
    const looped = await agent.start('go').settled;
    expect(common(looped)).toMatchObject({ status: 'failed', reason: 'max_iterations', iterations: 3 });
    await expect(agent.run('again')).rejects.toMatchObject({ code: 'max_iterations' });
    agent.stop();

    const endless: ReasoningStrategy<void, number> = {
      name: 'endless',
      init: () => 0,
      step: (n) => ({ kind: 'continue', thought: { id: `t${n}`, content: 'more' }, state: n + 1 }),
      aggregate: (_t, n) => ({ kind: 'error', reason: 'unused', state: n }),
    };
    const rounds = startStrategy({ strategy: endless, task: 'go', subAgent: { model: answers42() }, maxRounds: 3 });
    await expect(rounds.result).rejects.toMatchObject({ code: 'strategy_max_rounds' });
    const exceeded = await rounds.settled;
    expect(common(exceeded)).toMatchObject({ status: 'failed', reason: 'max_iterations', iterations: 3, text: null });
    expect(exceeded.error?.code).toBe('strategy_max_rounds');
    // The journal's end says the same as the result: the class and code a caller matches on.
    expect(terminatedOf(exceeded.events, exceeded.runId).error).toMatchObject({ name: 'StrategyRunError', code: 'strategy_max_rounds' });

    // An error decision and a thrown strategy call: both `error` and StrategyRunError (strategy_failed); only the throw has a `cause`.
    const giveUp: ReasoningStrategy<void, null> = { name: 'give-up', init: () => null, step: (state) => ({ kind: 'error', reason: 'nothing works', state }), aggregate: (_t, state) => ({ kind: 'error', reason: 'unused', state }) };
    const decided = startStrategy({ strategy: giveUp, task: 'go', subAgent: { model: answers42() } });
    await expect(decided.result).rejects.toMatchObject({ code: 'strategy_failed' });
    expect(common(await decided.settled)).toMatchObject({ status: 'failed', reason: 'error', iterations: 1, text: null });
    expect((await decided.settled).cause).toBeUndefined();
    const boom = new Error('step exploded');
    const throwing: ReasoningStrategy<void, null> = { name: 'throwing', init: () => null, step: () => Promise.reject(boom), aggregate: (_t, state) => ({ kind: 'error', reason: 'unused', state }) };
    const threw = startStrategy({ strategy: throwing, task: 'go', subAgent: { model: answers42() } });
    await expect(threw.result).rejects.toMatchObject({ code: 'strategy_failed' });
    expect(common(await threw.settled)).toMatchObject({ status: 'failed', reason: 'error', text: null });
    expect((await threw.settled).cause).toBe(boom);
    for (const ended of [await decided.settled, await threw.settled]) {
      expect(terminatedOf(ended.events, ended.runId).error).toMatchObject({ name: 'StrategyRunError', code: 'strategy_failed' });
    }

    const cancelled = startStrategy({ strategy: endless, task: 'go', subAgent: { model: answers42() } });
    cancelled.cancel('stop');
    await expect(cancelled.result).rejects.toMatchObject({ code: 'strategy_cancelled' });
    expect(common(await cancelled.settled)).toMatchObject({ status: 'cancelled', reason: 'cancelled', text: null });
  });
});
