/**
 * The pure machines of the agent system, with a controllable `runTask` and XState's
 * SimulatedClock: the mailbox's queueing, concurrency, deadlines and cancellation, and the root's
 * parent/child tree.
 */
import { describe, expect, it } from 'vitest';
import { createActor, createMachine, fromPromise, SimulatedClock } from 'xstate';
import {
  agentHostMachine,
  agentSystemMachine,
  subtree,
  type AgentHostEmitted,
  type HostTask,
  type RunTaskInput,
} from '../../machines/agentHost.machine.ts';
import type { LoopResult } from '../../src/core/run.ts';

interface Pending {
  readonly task: HostTask;
  readonly signal: AbortSignal;
  resolve(result: LoopResult): void;
  reject(error: unknown): void;
}

function resultFor(task: HostTask): LoopResult {
  return {
    runId: task.runId,
    agentId: 'worker',
    status: 'done',
    reason: 'final_answer',
    text: `answer to ${task.message}`,
    iterations: 1,
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    costUsd: 0,
    messages: [],
    durationMs: 0,
  };
}

function task(n: number, extra: Partial<HostTask> = {}): HostTask {
  return { taskId: `t${n}`, runId: `r${n}`, kind: 'tell', from: 'user', message: `m${n}`, ...extra };
}

/** A host whose tasks wait until the test settles them. */
function host(concurrency: number) {
  const pending = new Map<string, Pending>();
  const runTask = fromPromise<LoopResult, RunTaskInput>(
    ({ input, signal }) => new Promise((resolve, reject) => pending.set(input.task.taskId, { task: input.task, signal, resolve, reject })),
  );
  const clock = new SimulatedClock();
  const actor = createActor(agentHostMachine.provide({ actors: { runTask } }), { input: { agentId: 'worker', concurrency }, clock });
  const reports: AgentHostEmitted[] = [];
  actor.on('*', (report) => reports.push(report));
  actor.start();
  const flush = () => new Promise((resolve) => setTimeout(resolve, 0));
  return { actor, pending, clock, reports, flush, kinds: () => reports.map((r) => `${r.type}:${'task' in r ? r.task.taskId : r.report.task.taskId}`) };
}

describe('agentHost machine', () => {
  it('queues beyond its concurrency and starts the next task as one finishes', async () => {
    const h = host(2);
    for (const n of [1, 2, 3]) h.actor.send({ type: 'agent.tell', task: task(n) });
    expect(h.actor.getSnapshot().value).toBe('busy');
    expect(h.actor.getSnapshot().context.running.map((t) => t.taskId)).toEqual(['t1', 't2']);
    expect(h.actor.getSnapshot().context.queue.map((t) => t.taskId)).toEqual(['t3']);

    h.pending.get('t2')?.resolve(resultFor(task(2)));
    await h.flush();
    expect(h.actor.getSnapshot().context.running.map((t) => t.taskId)).toEqual(['t1', 't3']);
    const done = h.reports.find((r) => r.type === 'task.done');
    expect(done).toMatchObject({ task: { taskId: 't2' }, result: { text: 'answer to m2' } });

    h.pending.get('t1')?.reject(new Error('boom'));
    h.pending.get('t3')?.resolve(resultFor(task(3)));
    await h.flush();
    expect(h.actor.getSnapshot().value).toBe('idle');
    // Finished task actors are stopped, not left to pile up in `children`.
    expect(h.actor.getSnapshot().children).toEqual({});
    expect(h.kinds()).toEqual(['task.started:t1', 'task.started:t2', 'task.done:t2', 'task.started:t3', 'task.failed:t1', 'task.done:t3']);
    expect(h.reports.filter((r) => r.type === 'task.failed')).toMatchObject([{ task: { taskId: 't1' }, error: { message: 'boom' } }]);
  });

  it("times out an ask on the simulated clock, stopping its task actor (aborting the run's signal)", () => {
    const h = host(1);
    h.actor.send({ type: 'agent.ask', task: { ...task(1, { kind: 'ask' }), timeoutMs: 100 } });
    h.actor.send({ type: 'agent.ask', task: { ...task(2, { kind: 'ask' }), timeoutMs: 50 } });
    const running = h.pending.get('t1');

    h.clock.increment(50);
    expect(h.reports.at(-1)).toMatchObject({ type: 'task.timedOut', task: { taskId: 't2' }, started: false });
    expect(running?.signal.aborted).toBe(false);

    h.clock.increment(50);
    expect(h.reports.at(-1)).toMatchObject({ type: 'task.timedOut', task: { taskId: 't1' }, started: true });
    expect(running?.signal.aborted).toBe(true);
    expect(h.actor.getSnapshot().children).toEqual({});
    expect(h.actor.getSnapshot().value).toBe('idle');
  });

  it('cancels the deadline when the answer comes first', async () => {
    const h = host(1);
    h.actor.send({ type: 'agent.ask', task: { ...task(1, { kind: 'ask' }), timeoutMs: 100 } });
    h.pending.get('t1')?.resolve(resultFor(task(1)));
    await h.flush();
    h.clock.increment(1_000);
    expect(h.reports.map((r) => r.type)).toEqual(['task.started', 'task.done']);
  });

  it('cancels a queued or a running task on agent.cancel, and ignores unknown ids', () => {
    const h = host(1);
    h.actor.send({ type: 'agent.tell', task: task(1) });
    h.actor.send({ type: 'agent.tell', task: task(2) });
    h.actor.send({ type: 'agent.cancel', taskId: 't2', reason: 'not needed' });
    h.actor.send({ type: 'agent.cancel', taskId: 'nope' });
    expect(h.reports.at(-1)).toEqual({ type: 'task.cancelled', task: task(2), started: false, reason: 'not needed' });
    h.actor.send({ type: 'agent.cancel', taskId: 't1' });
    expect(h.reports.at(-1)).toMatchObject({ type: 'task.cancelled', started: true });
    expect(h.pending.get('t1')?.signal.aborted).toBe(true);
    expect(h.reports.filter((r) => r.type === 'task.cancelled')).toHaveLength(2);
  });

  it('aborts every running task when the host is stopped', () => {
    const h = host(3);
    for (const n of [1, 2]) h.actor.send({ type: 'agent.tell', task: task(n) });
    h.actor.stop();
    expect([...h.pending.values()].map((p) => p.signal.aborted)).toEqual([true, true]);
  });
});

describe('agentSystem machine', () => {
  const spawnTree = () => {
    const actor = createActor(agentSystemMachine).start();
    actor.send({ type: 'system.spawn', id: 'p', concurrency: 1 });
    actor.send({ type: 'system.spawn', id: 'c', parent: 'p', concurrency: 1 });
    actor.send({ type: 'system.spawn', id: 'g', parent: 'c', concurrency: 1 });
    actor.send({ type: 'system.spawn', id: 'u', concurrency: 1 });
    return actor;
  };

  it('registers each host under its id and ignores duplicates and unknown parents', () => {
    const actor = spawnTree();
    actor.send({ type: 'system.spawn', id: 'c', concurrency: 1 });
    actor.send({ type: 'system.spawn', id: 'x', parent: 'missing', concurrency: 1 });
    expect(actor.getSnapshot().context.agents.map((n) => n.id)).toEqual(['p', 'c', 'g', 'u']);
    expect(actor.system.get('g')).toBe(actor.getSnapshot().children.g);
    expect(actor.system.get('x')).toBeUndefined();
  });

  it('drops a host that fails, with its subtree, and reports it', () => {
    const buggy = createMachine({ on: { 'agent.tell': { actions: () => { throw new Error('host bug'); } } } });
    const actor = createActor(agentSystemMachine.provide({ actors: { agentHost: buggy as unknown as typeof agentHostMachine } })).start();
    const failures: unknown[] = [];
    actor.on('system.agentFailed', (event) => failures.push(event));
    actor.send({ type: 'system.spawn', id: 'p', concurrency: 1 });
    actor.send({ type: 'system.spawn', id: 'c', parent: 'p', concurrency: 1 });
    actor.send({ type: 'system.spawn', id: 'u', concurrency: 1 });
    const child = actor.system.get('c');
    actor.system.get('p')?.send({ type: 'agent.tell' });
    expect(failures).toMatchObject([{ type: 'system.agentFailed', id: 'p', error: { message: 'host bug' } }]);
    expect(actor.getSnapshot().context.agents).toEqual([{ id: 'u', parent: null }]);
    expect(Object.keys(actor.getSnapshot().children)).toEqual(['u']);
    expect(child?.getSnapshot().status).toBe('stopped');
    expect(actor.getSnapshot().status).toBe('active');
  });

  it('stops an agent with its descendants, deepest first', () => {
    const actor = spawnTree();
    const refs = ['p', 'c', 'g', 'u'].map((id) => actor.system.get(id));
    expect(subtree(actor.getSnapshot().context.agents, 'p')).toEqual(['g', 'c', 'p']);
    actor.send({ type: 'system.stop', id: 'p' });
    expect(refs.map((ref) => ref?.getSnapshot().status)).toEqual(['stopped', 'stopped', 'stopped', 'active']);
    expect(Object.keys(actor.getSnapshot().children)).toEqual(['u']);
    actor.send({ type: 'system.stopAll' });
    expect(refs[3]?.getSnapshot().status).toBe('stopped');
    expect(actor.getSnapshot().context.agents).toEqual([]);
  });
});
