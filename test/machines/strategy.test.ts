import { createActor, fromPromise, SimulatedClock, toPromise, waitFor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { strategyMachine } from '../../machines/strategy.machine.ts';
import type {
  StrategyBranchInput,
  StrategyBranchOutput,
  StrategyDecideInput,
  StrategyDecideOutput,
  StrategyEmitted,
  StrategyInitInput,
  StrategyInitOutput,
  StrategyMachineInput,
} from '../../machines/strategy.types.ts';
import type { Branch, StrategyDecision, Thought } from '../../src/core/strategy.ts';

const ZERO = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
const usage = (n: number) => ({ promptTokens: n, completionTokens: 0, totalTokens: n });
const branches = (n: number): Branch[] => Array.from({ length: n }, (_, i) => ({ id: `b${i}`, prompt: `try ${i}` }));

type Decide = (input: StrategyDecideInput) => StrategyDecision<unknown> | Promise<StrategyDecision<unknown>>;
type RunBranch = (input: StrategyBranchInput, signal: AbortSignal) => Promise<StrategyBranchOutput>;

/** A runner whose strategy calls and branches are plain test functions. */
function runner(fns: { step: Decide; aggregate?: Decide; branch?: RunBranch }) {
  const calls = { step: 0, aggregate: [] as (readonly Thought[])[], signals: [] as AbortSignal[] };
  const machine = strategyMachine.provide({
    actors: {
      init: fromPromise<StrategyInitOutput, StrategyInitInput>(async () => ({ state: { n: 0 }, usage: usage(1) })),
      step: fromPromise<StrategyDecideOutput, StrategyDecideInput>(async ({ input }) => {
        calls.step++;
        return { decision: await fns.step(input), usage: usage(2) };
      }),
      aggregate: fromPromise<StrategyDecideOutput, StrategyDecideInput>(async ({ input }) => {
        calls.aggregate.push(input.thoughts ?? []);
        const decide = fns.aggregate ?? ((i: StrategyDecideInput) => ({ kind: 'done' as const, answer: (i.thoughts ?? []).map((t) => t.content).join('|'), state: i.state }));
        return { decision: await decide(input), usage: ZERO };
      }),
      branch: fromPromise<StrategyBranchOutput, StrategyBranchInput>(async ({ input, signal }) => {
        calls.signals.push(signal);
        if (fns.branch !== undefined) return fns.branch(input, signal);
        return { thought: { id: input.branch.id, content: `answer ${input.index}` }, usage: usage(10), durationMs: 1 };
      }),
    },
  });
  return { machine, calls };
}

const input = (over: Partial<StrategyMachineInput> = {}): StrategyMachineInput => ({
  runId: 'run-1',
  strategy: 'test',
  task: 'do it',
  model: 'test-model',
  maxRounds: 10,
  concurrency: 4,
  timeoutMs: 60_000,
  ...over,
});

function start(machine: ReturnType<typeof runner>['machine'], inp = input(), clock?: SimulatedClock) {
  const events: StrategyEmitted[] = [];
  const actor = createActor(machine, { input: inp, ...(clock === undefined ? {} : { clock }) });
  actor.on('*', (e) => events.push(e));
  actor.start();
  return { actor, events };
}

const hang = (signal: AbortSignal) => new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
const later = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe('strategy machine', () => {
  it('runs init → step → branches → aggregate → done and announces every decision', async () => {
    const { machine, calls } = runner({ step: ({ state }) => ({ kind: 'branch', branches: branches(3), state }) });
    const { actor, events } = start(machine);
    const out = await toPromise(actor);
    expect(out.reason).toBe('done');
    expect(out.answer).toBe('answer 0|answer 1|answer 2');
    expect(out.rounds).toBe(2);
    expect(out.thoughts.map((t) => t.id)).toEqual(['b0', 'b1', 'b2']);
    // 1 (init) + 2 (step) + 3 × 10 (branches)
    expect(out.usage.totalTokens).toBe(33);
    expect(calls.aggregate).toHaveLength(1);
    const decided = events.filter((e) => e.type === 'strategy.decided');
    expect(decided.map((e) => [e.decision, e.round])).toEqual([
      ['branch', 1],
      ['done', 2],
    ]);
    expect(decided[0]).toMatchObject({ strategy: 'test', detail: '3 branches: b0, b1, b2' });
    expect(events.map((e) => e.type)).toEqual([
      'run.started',
      'strategy.decided',
      'branch.started',
      'branch.started',
      'branch.started',
      'branch.finished',
      'branch.finished',
      'branch.finished',
      'strategy.decided',
      'run.terminated',
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'run.terminated', reason: 'final_answer', iterations: 2 });
  });

  it('hands the branch thoughts to aggregate in branch order, whatever order they finish in', async () => {
    const { machine, calls } = runner({
      step: ({ state }) => ({ kind: 'branch', branches: branches(3), state }),
      branch: (i) => later((3 - i.index) * 5, { thought: { id: i.branch.id, content: String(i.index) }, usage: ZERO, durationMs: 0 }),
    });
    const { actor, events } = start(machine);
    await toPromise(actor);
    expect(calls.aggregate[0]?.map((t) => t.id)).toEqual(['b0', 'b1', 'b2']);
    expect(events.filter((e) => e.type === 'branch.finished').map((e) => e.branchId)).toEqual(['b2', 'b1', 'b0']);
  });

  it('spawns each branch as a child actor of the runner, with its own id', async () => {
    const { machine } = runner({ step: ({ state }) => ({ kind: 'branch', branches: branches(3), state }), branch: (_, signal) => hang(signal) });
    const { actor } = start(machine);
    await waitFor(actor, (s) => s.matches({ running: 'branching' }));
    expect(Object.keys(actor.getSnapshot().children).sort()).toEqual(['branch:1:0:b0', 'branch:1:1:b1', 'branch:1:2:b2']);
    actor.stop();
  });

  it('runs at most `concurrency` branches at once and starts the queued ones in order', async () => {
    let inFlight = 0;
    let peak = 0;
    const startedOrder: number[] = [];
    const { machine } = runner({
      step: ({ state }) => ({ kind: 'branch', branches: branches(5), state }),
      branch: async (i) => {
        startedOrder.push(i.index);
        peak = Math.max(peak, ++inFlight);
        await later(10, null);
        inFlight--;
        return { thought: { id: i.branch.id, content: 'x' }, usage: ZERO, durationMs: 10 };
      },
    });
    const { actor } = start(machine, input({ concurrency: 2 }));
    const out = await toPromise(actor);
    expect(peak).toBe(2);
    expect(out.peakInFlight).toBe(2);
    expect(startedOrder).toEqual([0, 1, 2, 3, 4]);
    expect(out.thoughts).toHaveLength(5);
  });

  it('turns a failing branch into an error thought while the other branches finish', async () => {
    const { machine, calls } = runner({
      step: ({ state }) => ({ kind: 'branch', branches: branches(3), state }),
      branch: async (i) => {
        if (i.index === 1) throw new Error('sub-agent exploded');
        return { thought: { id: i.branch.id, content: `ok ${i.index}` }, usage: ZERO, durationMs: 1 };
      },
    });
    const { actor, events } = start(machine);
    const out = await toPromise(actor);
    expect(out.reason).toBe('done');
    const thoughts = calls.aggregate[0] ?? [];
    expect(thoughts.map((t) => t.content)).toEqual(['ok 0', '', 'ok 2']);
    expect(thoughts[1]?.metadata?.error).toBe('sub-agent exploded');
    expect(events.filter((e) => e.type === 'branch.finished').map((e) => [e.branchId, e.ok])).toEqual(
      expect.arrayContaining([
        ['b0', true],
        ['b1', false],
        ['b2', true],
      ]),
    );
  });

  it('goes straight to aggregate when a branch decision has no branches', async () => {
    const { machine, calls } = runner({ step: ({ state }) => ({ kind: 'branch', branches: [], state }) });
    const out = await toPromise(start(machine).actor);
    expect(out.reason).toBe('done');
    expect(calls.aggregate).toEqual([[]]);
  });

  it('stops every branch on strategy.cancel: their signals abort and no child is left', async () => {
    const { machine, calls } = runner({ step: ({ state }) => ({ kind: 'branch', branches: branches(6), state }), branch: (_, signal) => hang(signal) });
    const { actor, events } = start(machine, input({ concurrency: 4 }));
    await waitFor(actor, (s) => Object.keys(s.children).length === 4);
    actor.send({ type: 'strategy.cancel', reason: 'user stop' });
    const out = await toPromise(actor);
    expect(out.reason).toBe('cancelled');
    expect(out.message).toBe('user stop');
    expect(calls.signals).toHaveLength(4);
    expect(calls.signals.every((s) => s.aborted)).toBe(true);
    expect(Object.keys(actor.getSnapshot().children)).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: 'run.terminated', reason: 'cancelled' });
  });

  it('fails with max_rounds instead of letting a strategy continue forever', async () => {
    const { machine, calls } = runner({
      step: ({ state, round }) => ({ kind: 'continue', thought: { id: `t${round}`, content: 'more' }, state }),
    });
    const { actor, events } = start(machine, input({ maxRounds: 4 }));
    const out = await toPromise(actor);
    expect(out.reason).toBe('max_rounds');
    expect(out.rounds).toBe(4);
    expect(calls.step).toBe(4);
    expect(out.thoughts.map((t) => t.id)).toEqual(['t1', 't2', 't3', 't4']);
    expect(events.at(-1)).toMatchObject({ type: 'run.terminated', reason: 'max_iterations', error: { code: 'strategy_max_rounds' } });
  });

  it('does not start branches with the last allowed decision', async () => {
    const { machine, calls } = runner({ step: ({ state }) => ({ kind: 'branch', branches: branches(2), state }) });
    const out = await toPromise(start(machine, input({ maxRounds: 1 })).actor);
    expect(out.reason).toBe('max_rounds');
    expect(calls.signals).toHaveLength(0);
  });

  it('revise goes back to step with the strategy state it returned', async () => {
    const seen: unknown[] = [];
    const { machine } = runner({
      step: ({ state, round }) => {
        seen.push(state);
        return round < 3 ? { kind: 'revise', feedback: 'again', state: { n: round } } : { kind: 'done', answer: 'fine', state };
      },
    });
    const { actor, events } = start(machine);
    const out = await toPromise(actor);
    expect(out.answer).toBe('fine');
    expect(seen).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
    expect(events.filter((e) => e.type === 'strategy.decided').map((e) => e.detail)).toEqual(['feedback: again', 'feedback: again', 'answer: fine']);
  });

  it('ends failed with the reason of an error decision', async () => {
    const { machine } = runner({ step: ({ state }) => ({ kind: 'error', reason: 'nothing works', state }) });
    const { actor, events } = start(machine);
    const out = await toPromise(actor);
    expect(out).toMatchObject({ reason: 'error', message: 'nothing works', answer: null });
    expect(events.find((e) => e.type === 'strategy.decided')).toMatchObject({ decision: 'error', detail: 'nothing works' });
  });

  it('ends failed with the thrown error when a strategy call throws', async () => {
    const boom = new Error('step exploded');
    const { machine } = runner({
      step: () => {
        throw boom;
      },
    });
    const out = await toPromise(start(machine).actor);
    expect(out).toMatchObject({ reason: 'exception', message: 'step exploded' });
    expect(out.error).toBe(boom);
  });

  it('fails on its wall-clock budget (the named delay) and stops the branches', async () => {
    const clock = new SimulatedClock();
    const { machine, calls } = runner({ step: ({ state }) => ({ kind: 'branch', branches: branches(2), state }), branch: (_, signal) => hang(signal) });
    const { actor } = start(machine, input({ timeoutMs: 5_000 }), clock);
    await waitFor(actor, (s) => Object.keys(s.children).length === 2);
    clock.increment(4_999);
    expect(actor.getSnapshot().status).toBe('active');
    clock.increment(1);
    const out = await toPromise(actor);
    expect(out.reason).toBe('timeout');
    expect(calls.signals.every((s) => s.aborted)).toBe(true);
  });

  it('persists mid-fan-out with named branch children, and the restored runner finishes', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = runner({
      step: ({ state }) => ({ kind: 'branch', branches: branches(2), state }),
      branch: async (i, signal) => {
        await Promise.race([gate, hang(signal)]);
        return { thought: { id: i.branch.id, content: `r${i.index}` }, usage: ZERO, durationMs: 0 };
      },
    });
    const { actor } = start(first.machine);
    await waitFor(actor, (s) => Object.keys(s.children).length === 2);
    const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot())) as { children: Record<string, { src: unknown }> };
    actor.stop();
    expect(Object.values(persisted.children).map((c) => c.src)).toEqual(['branch', 'branch']);

    const second = runner({ step: () => ({ kind: 'error', reason: 'step must not run again', state: null }) });
    const restored = createActor(second.machine, { input: input(), snapshot: persisted as never });
    restored.start();
    release();
    const out = await toPromise(restored);
    expect(out.reason).toBe('done');
    expect(out.answer).toBe('answer 0|answer 1');
  });
});
