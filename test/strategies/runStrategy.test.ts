import { lastValueFrom, toArray } from 'rxjs';
import type { AnyActorRef, InspectionEvent } from 'xstate';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ConfigurationError } from '../../src/core/errors.ts';
import { JournalEntry } from '../../src/core/loopEvent.ts';
import { runStrategy, startStrategy, strategies } from '../../src/strategies/index.ts';
import type { ReasoningStrategy } from '../../src/core/strategy.ts';
import { createAgent } from '../../src/agent/createAgent.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import type { CompletionRequest } from '../../src/core/provider.ts';
import { answering, judge, metered } from './support.ts';
import type { StrategyRunError } from '../../src/strategies/errors.ts';

/** n branches on the task; the answer joins their thoughts. */
function fanOut(n: number): ReasoningStrategy<void, null> {
  return {
    name: 'fanout',
    init: () => null,
    step: (state, ctx) => ({ kind: 'branch', branches: Array.from({ length: n }, (_, i) => ({ id: `b${i}`, prompt: `${ctx.task} #${i}` })), state }),
    aggregate: (thoughts, state) => ({ kind: 'done', answer: thoughts.map((t) => t.content).join(','), state }),
  };
}

const slow = (ms: number) => scriptedModel(() => ({ text: 'x', delayMs: ms }));

describe('runStrategy', () => {
  it('runs branches in parallel: 4 branches of 1 s take about 1 s, not 4', async () => {
    const started = performance.now();
    const result = await runStrategy({ strategy: fanOut(4), task: 'go', subAgent: { model: slow(1_000), resilience: { breakers: false } }, concurrency: 4 });
    const wall = performance.now() - started;
    expect(result.text).toBe('x,x,x,x');
    expect(result.peakConcurrency).toBe(4);
    expect(wall).toBeGreaterThanOrEqual(999);
    expect(wall).toBeLessThan(4_000);
  });

  it('keeps concurrent runs apart: each run\'s strategy and branches answer for that run only, on its own provided machine', async () => {
    // Each run's branches answer after a different delay, so the runs interleave in time.
    const runs = [3, 1, 2].map((k) =>
      startStrategy({
        strategy: fanOut(k),
        task: `task ${k}`,
        subAgent: answering((branch) => ({ text: `${branch.prompt}`, delayMs: 10 * (4 - k) })),
        concurrency: 3,
      }),
    );
    const results = await Promise.all(runs.map((run) => run.result));
    results.forEach((result, i) => {
      const k = [3, 1, 2][i] as number;
      expect(result.text).toBe(Array.from({ length: k }, (_, b) => `task ${k} #${b}`).join(','));
      expect(result.events.every((entry) => entry.runId === result.runId || entry.runId.startsWith(`${result.runId}-`))).toBe(true);
    });
    expect(new Set(runs.map((run) => run.actor.logic)).size).toBe(runs.length);
  });

  it('never has more than `concurrency` sub-agents calling the model at once', async () => {
    const shared = metered(slow(40));
    const started = performance.now();
    const result = await runStrategy({ strategy: fanOut(5), task: 'go', subAgent: { model: shared.model, resilience: { breakers: false } }, concurrency: 2 });
    const wall = performance.now() - started;
    expect(shared.peak()).toBe(2);
    expect(result.peakConcurrency).toBe(2);
    // Three waves (2 + 2 + 1) of 40 ms: queued branches really waited.
    expect(wall).toBeGreaterThanOrEqual(115);
    let inFlight = 0;
    let peak = 0;
    for (const entry of result.events) {
      if (entry.runId !== result.runId) continue;
      if (entry.event.type === 'branch.started') peak = Math.max(peak, ++inFlight);
      if (entry.event.type === 'branch.finished') inFlight--;
    }
    expect(peak).toBe(2);
  });

  it('runs each branch as a full agent loop, tools included, and makes its answer the thought', async () => {
    const calls: number[] = [];
    const add = defineTool({
      name: 'add',
      description: 'Add two numbers',
      input: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => {
        calls.push(a + b);
        return a + b;
      },
    });
    const result = await runStrategy({
      strategy: fanOut(2),
      task: 'add',
      subAgent: (_branch, info) => ({
        model: scriptedModel([{ toolCalls: [{ name: 'add', arguments: { a: info.index, b: 40 } }] }, { text: `sum ${info.index + 40}` }]),
        tools: [add],
        resilience: { breakers: false },
      }),
    });
    expect(result.text).toBe('sum 40,sum 41');
    expect(calls.sort()).toEqual([40, 41]);
    expect(result.thoughts[0]?.metadata).toMatchObject({ iterations: 2, runId: `${result.runId}-r1-b0` });
    const toolEvents = result.events.filter((e) => e.event.type === 'tool.finished');
    expect(toolEvents.map((e) => e.runId).sort()).toEqual([`${result.runId}-r1-b0`, `${result.runId}-r1-b1`]);
  });

  it('keeps going when a branch fails: the failure is an error thought, the rest still answer', async () => {
    const result = await runStrategy({
      strategy: strategies.vote({ samples: 3 }),
      task: 'capital of France?',
      subAgent: answering((b) => (b.id === 's1' ? { error: new Error('provider down') } : 'Paris')),
    });
    expect(result.status).toBe('done');
    expect(result.text).toBe('Paris');
    const failed = result.thoughts.find((t) => t.id === 's1');
    expect(failed?.metadata?.error).toMatch(/provider down/);
    const finished = result.events.filter((e) => e.event.type === 'branch.finished').map((e) => e.event);
    expect(finished).toEqual(expect.arrayContaining([expect.objectContaining({ branchId: 's1', ok: false })]));
  });

  it('cancels every branch: their model calls are aborted and no actor is left running', async () => {
    const model = slow(5_000);
    const run = startStrategy({ strategy: fanOut(4), task: 'go', subAgent: { model, resilience: { breakers: false } }, concurrency: 4 });
    // Wait until all four sub-agents are inside their model call.
    while (model.calls.length < 4) await new Promise((resolve) => setTimeout(resolve, 5));
    const started = performance.now();
    run.cancel('user stop');
    await expect(run.result).rejects.toMatchObject({ code: 'strategy_cancelled' });
    const result = await run.settled;
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(result.status).toBe('cancelled');
    expect(model.calls.every((c: CompletionRequest) => c.signal?.aborted === true)).toBe(true);
    expect(run.actor.getSnapshot().status).toBe('done');
    expect(Object.keys(run.actor.getSnapshot().children)).toEqual([]);
    const subTerminated = result.events.filter((e) => e.runId !== result.runId && e.event.type === 'run.terminated');
    expect(subTerminated.map((e) => (e.event.type === 'run.terminated' ? e.event.reason : ''))).toEqual(['cancelled', 'cancelled', 'cancelled', 'cancelled']);
  });

  it('ends the runs of branches cancelled as they begin: none is left open in the store for a resume to pick up', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'actorloop-strategy-cancel-'));
    try {
      const store = createFileStore({ dir });
      const model = scriptedModel(() => ({ text: 'x' }));
      const run = startStrategy({ strategy: fanOut(2), task: 'go', subAgent: { model, persistence: { store }, resilience: { breakers: false } } });
      // Cancelled in the same step the branches are spawned, before their runs are.
      run.events$.subscribe(({ event }) => event.type === 'branch.started' && run.cancel('user stop'));
      const result = await run.settled;

      expect(result.status).toBe('cancelled');
      const branchRuns = await store.listRuns();
      expect(branchRuns).toHaveLength(2);
      // Each ends once its cancelled run has settled (its log is written in the background).
      await vi.waitFor(async () => expect((await store.listRuns()).map((r) => r.status)).toEqual(['cancelled', 'cancelled']), { timeout: 5_000 });
      expect(model.calls).toHaveLength(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 20_000);

  it('counts the tokens of branches stopped by a cancel, and of finished ones exactly once', async () => {
    const usage = { promptTokens: 3, completionTokens: 4, totalTokens: 7 };
    // Waits until its run is stopped.
    const wait = defineTool({
      name: 'wait',
      description: 'Waits',
      input: z.object({}),
      execute: (_args, context) => new Promise<never>((_resolve, reject) => context.signal.addEventListener('abort', () => reject(new Error('stopped')))),
    });
    const run = startStrategy({
      strategy: fanOut(2),
      task: 'go',
      subAgent: (_branch, info) => ({
        // Branch 0 answers at once; branch 1 has spent its first call's tokens and waits in a tool.
        model: scriptedModel(info.index === 0 ? [{ text: 'quick', usage }] : [{ toolCalls: [{ name: 'wait', arguments: {} }], usage }]),
        tools: [wait],
        resilience: { breakers: false },
      }),
    });
    let finished = 0;
    let waiting = false;
    run.events$.subscribe(({ event }) => {
      if (event.type === 'branch.finished') finished++;
      if (event.type === 'tool.started') waiting = true;
      if (finished === 1 && waiting) run.cancel('user stop');
    });
    const result = await run.settled;

    expect(result.status).toBe('cancelled');
    expect(result.usage).toMatchObject({ promptTokens: 6, completionTokens: 8, totalTokens: 14 });
  }, 20_000);

  it('cancels when the caller aborts its signal', async () => {
    const controller = new AbortController();
    const model = slow(5_000);
    const run = startStrategy({ strategy: fanOut(2), task: 'go', subAgent: { model, resilience: { breakers: false } }, signal: controller.signal });
    while (model.calls.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(new Error('deadline'));
    const result = await run.settled;
    expect(result.status).toBe('cancelled');
    expect(result.error?.message).toMatch(/deadline/);
    expect(model.calls.every((c: CompletionRequest) => c.signal?.aborted === true)).toBe(true);
  });

  it('sums usage over branch runs and direct completions', async () => {
    const usage = { promptTokens: 3, completionTokens: 4, totalTokens: 7 };
    const scoring: ReasoningStrategy<void, null> = {
      name: 'scoring',
      init: () => null,
      step: async (state, ctx) => {
        await ctx.complete('warm up');
        return { kind: 'branch', branches: [{ id: 'a', prompt: 'a' }, { id: 'b', prompt: 'b' }], state };
      },
      aggregate: async (thoughts, state, ctx) => ({ kind: 'done', answer: await ctx.complete('pick'), state }),
    };
    const result = await runStrategy({
      strategy: scoring,
      task: 'go',
      model: scriptedModel(() => ({ text: 'picked', usage })),
      subAgent: answering(() => ({ text: 'x', usage: { promptTokens: 10, completionTokens: 10, totalTokens: 20 } })),
    });
    expect(result.text).toBe('picked');
    expect(result.usage).toEqual({ promptTokens: 26, completionTokens: 28, totalTokens: 54 });
  });

  it('journals every decision and branch as a valid entry, with each sub-agent run alongside', async () => {
    const run = startStrategy({
      strategy: strategies.tree({ breadth: 2, depth: 2, beamWidth: 1, scorer: (t) => t.content.length }),
      task: 'go',
      subAgent: answering((b) => `answer ${b.id}`),
      agentId: 'lead',
    });
    const live = lastValueFrom(run.events$.pipe(toArray()));
    const result = await run.result;
    const entries = await live;
    expect(entries).toEqual(result.events);
    for (const entry of entries) expect(JournalEntry.safeParse(entry).success).toBe(true);
    const own = entries.filter((e) => e.runId === result.runId);
    expect(own.every((e) => e.agentId === 'lead')).toBe(true);
    expect(own.map((e) => e.sequence)).toEqual(own.map((_, i) => i));
    const decided = own.flatMap((e) => (e.event.type === 'strategy.decided' ? [[e.event.round, e.event.decision, e.iteration]] : []));
    expect(decided).toEqual([
      [1, 'branch', 1],
      [2, 'branch', 2],
      [3, 'done', 3],
    ]);
    expect(own.filter((e) => e.event.type === 'branch.started')).toHaveLength(4);
    expect(own.filter((e) => e.event.type === 'branch.finished')).toHaveLength(4);
    const subRuns = new Set(entries.filter((e) => e.runId !== result.runId).map((e) => e.runId));
    expect(subRuns.size).toBe(4);
    // A late subscriber gets the whole run, then completion.
    expect(await lastValueFrom(run.events$.pipe(toArray()))).toHaveLength(entries.length);
  });

  it('shows the branch sub-agents as children of the runner in the inspector', async () => {
    const actors: AnyActorRef[] = [];
    const inspect = (event: InspectionEvent) => {
      if (event.type === '@xstate.actor') actors.push(event.actorRef as AnyActorRef);
    };
    const run = startStrategy({ strategy: fanOut(3), task: 'go', subAgent: answering(() => 'x'), inspect });
    await run.result;
    const branches = actors.filter((a) => a.id.startsWith('branch:'));
    expect(branches.map((a) => a.id).sort()).toEqual(['branch:1:0:b0', 'branch:1:1:b1', 'branch:1:2:b2']);
    expect(branches.every((a) => a._parent === run.actor)).toBe(true);
    // Sub-agents built from a config inherit the inspector: their loops are visible too.
    const loops = actors.filter((a) => (a.src as { id?: string }).id === 'agent');
    expect(loops.map((a) => (a.getSnapshot() as { context: { runId: string } }).context.runId).sort()).toEqual([0, 1, 2].map((i) => `${run.runId}-r1-b${i}`));
  });

  it('accepts a ready Agent for the branches and leaves it running', async () => {
    const agent = createAgent({ model: scriptedModel(() => ({ text: 'shared' })), resilience: { breakers: false } });
    const result = await runStrategy({ strategy: fanOut(3), task: 'go', subAgent: () => agent });
    expect(result.text).toBe('shared,shared,shared');
    expect(await agent.run('still usable?')).toMatchObject({ text: 'shared' });
  });

  it('scrubs secrets from its own events, decision details included', async () => {
    const canary = 'canary-7f3a9c1e55d2';
    const leaky: ReasoningStrategy<void, null> = {
      name: 'leaky',
      init: () => null,
      step: (state) => ({ kind: 'done', answer: 'ok', state, detail: `found ${canary} in the task` }),
      aggregate: (_t, state) => ({ kind: 'error', reason: 'unused', state }),
    };
    const result = await runStrategy({ strategy: leaky, task: `use ${canary}`, subAgent: answering(() => 'x'), redact: { secrets: [canary] } });
    expect(JSON.stringify(result.events)).not.toContain(canary);
    expect(result.events.some((e) => e.event.type === 'strategy.decided' && e.event.detail?.includes('[REDACTED]') === true)).toBe(true);
  });

  it('fails with StrategyRunError (strategy_max_rounds) when a strategy never finishes', async () => {
    const endless: ReasoningStrategy<void, number> = {
      name: 'endless',
      init: () => 0,
      step: (n) => ({ kind: 'continue', thought: { id: `t${n}`, content: 'more' }, state: n + 1 }),
      aggregate: (_t, n) => ({ kind: 'error', reason: 'unused', state: n }),
    };
    const error = await runStrategy({ strategy: endless, task: 'go', subAgent: answering(() => 'x'), maxRounds: 5 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'strategy_max_rounds' });
    const rounds = error as StrategyRunError;
    expect(rounds.result.iterations).toBe(5);
    expect(rounds.message).toMatch(/Raise `maxRounds`/);
    expect(rounds.runId).toBe(rounds.result.runId);
  });

  it('rejects a malformed decision with a message saying what a decision looks like', async () => {
    const broken = {
      name: 'broken',
      init: () => null,
      step: () => ({ kind: 'branch', branches: [{ id: 'a', prompt: 'x' }, { id: 'a', prompt: 'y' }], state: null }),
      aggregate: () => ({ kind: 'done', answer: '', state: null }),
    } as ReasoningStrategy<void, null>;
    const error = await runStrategy({ strategy: broken, task: 'go', subAgent: answering(() => 'x') }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'strategy_failed' });
    expect((error as StrategyRunError).cause).toMatchObject({ code: 'invalid_decision' });
    expect((error as Error).message).toMatch(/two branches with the id "a"/);
  });

  it('says to pass `model` when a strategy asks the model directly without one', async () => {
    const error = await runStrategy({ strategy: strategies.tree(), task: 'go', subAgent: answering(() => 'x') }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'strategy_failed' });
    expect((error as Error).message).toMatch(/pass `model` to runStrategy/);
  });

  it('refuses bad configuration before starting anything', () => {
    expect(() => startStrategy({ strategy: fanOut(1), task: ' ', subAgent: answering(() => 'x') })).toThrow(ConfigurationError);
    expect(() => startStrategy({ strategy: fanOut(1), task: 'go', subAgent: answering(() => 'x'), concurrency: 0 })).toThrow(/concurrency/);
    expect(() => startStrategy({ strategy: {} as ReasoningStrategy, task: 'go', subAgent: answering(() => 'x') })).toThrow(/strategies\.\*/);
  });

  it('uses the judge model for direct completions', async () => {
    const result = await runStrategy({
      strategy: strategies.refine({ maxRevisions: 1 }),
      task: 'go',
      model: judge(() => 'ACCEPT'),
      subAgent: answering(() => 'draft'),
    });
    expect(result.text).toBe('draft');
  });

  it("removes each finished branch from the runner's children, so none linger after the run", async () => {
    const run = startStrategy({ strategy: strategies.vote({ samples: 3 }), task: 'x', subAgent: answering(() => ({ text: '42', delayMs: 5 })) });
    const branchesSeen = new Set<string>();
    run.actor.subscribe((snapshot) => {
      for (const id of Object.keys(snapshot.children)) if (id.startsWith('branch:')) branchesSeen.add(id);
    });
    expect((await run.settled).status).toBe('done');
    expect(branchesSeen.size).toBe(3);
    expect(Object.keys(run.actor.getSnapshot().children)).toEqual([]);
  });
});
