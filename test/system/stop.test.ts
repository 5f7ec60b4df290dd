/**
 * Stopping: an agent goes with all its descendants — hosts stopped, tasks stopped, runs
 * cancelled, pending asks rejected — and every actor the system ever started is accounted for.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LoopResult } from '../../src/core/run.ts';
import type { AgentSystem } from '../../src/system/types.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { activeActors, ownerOf, trackedSystem } from './helpers.ts';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const slow = () => scriptedModel(() => ({ text: 'late', delayMs: 60_000 }));

/** P → (C1 → G, C2), and an unrelated U; each agent busy with one slow ask. */
async function busyTree(system: AgentSystem): Promise<Map<string, Promise<unknown>>> {
  system.spawn('P', { model: slow() });
  system.spawn('C1', { model: slow() }, { parent: 'P' });
  system.spawn('C2', { model: slow() }, { parent: 'P' });
  system.spawn('G', { model: slow() }, { parent: 'C1' });
  system.spawn('U', { model: slow() });
  const answers = new Map<string, Promise<unknown>>();
  for (const id of ['P', 'C1', 'C2', 'G', 'U']) answers.set(id, system.ask(id, `work for ${id}`).catch((e: unknown) => e));
  // Let every run reach its (slow) model call.
  await vi.advanceTimersByTimeAsync(1);
  return answers;
}

function terminations(system: AgentSystem, id: string): string[] {
  return system.get(id).agent.journal.entries().flatMap((e) => (e.event.type === 'run.terminated' ? [e.event.reason] : []));
}

describe('stop', () => {
  it('stops the parent and every descendant, leaving no actor of theirs running', async () => {
    const { system, actors, runOwners } = trackedSystem();
    const answers = await busyTree(system);
    const journals = new Map(['P', 'C1', 'C2', 'G'].map((id) => [id, system.get(id).agent.journal]));
    const hosts = new Map(['P', 'C1', 'C2', 'G'].map((id) => [id, system.get(id).actor]));
    const owners = (list: ReturnType<typeof activeActors>) => new Set(list.map((a) => ownerOf(a, system, runOwners)));
    // Before: root, five hosts, five tasks, five runs (and their in-flight model calls) are active.
    expect(owners(activeActors(actors))).toEqual(new Set(['root', 'P', 'C1', 'C2', 'G', 'U']));
    expect(activeActors(actors).length).toBeGreaterThanOrEqual(16);

    system.stop('P');

    // Synchronously: only the root and U's actors are still running.
    expect(owners(activeActors(actors))).toEqual(new Set(['root', 'U']));
    for (const [id, host] of hosts) {
      expect(host.getSnapshot().status, id).toBe('stopped');
      expect(system.actor.system.get(id), id).toBeUndefined();
      const reasons = journals.get(id)?.entries().flatMap((e) => (e.event.type === 'run.terminated' ? [e.event.reason] : []));
      expect(reasons, id).toEqual(['cancelled']);
      expect(await answers.get(id), id).toMatchObject({ code: 'agent_stopped' });
    }
    expect(system.list().map((a) => a.id)).toEqual(['U']);
    expect(Object.keys(system.actor.getSnapshot().children)).toEqual(['U']);
    expect(system.actor.getSnapshot().context.agents).toEqual([{ id: 'U', parent: null }]);
    expect(terminations(system, 'U')).toEqual([]);

    system.stopAll();
    expect(activeActors(actors)).toEqual([]);
    expect(await answers.get('U')).toMatchObject({ code: 'agent_stopped' });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('stops a child without touching its parent', async () => {
    const { system } = trackedSystem();
    const answers = await busyTree(system);
    system.stop('C1');
    expect(system.list().map((a) => a.id)).toEqual(['P', 'C2', 'U']);
    expect(system.get('P').children()).toEqual(['C2']);
    expect(await answers.get('G')).toMatchObject({ code: 'agent_stopped' });
    expect(terminations(system, 'P')).toEqual([]);
    expect(() => system.spawn('H', { model: slow() }, { parent: 'C1' })).toThrow(expect.objectContaining({ code: 'agent_not_found' }));
    // The id is free again.
    expect(system.spawn('C1', { model: slow() }, { parent: 'P' }).parent).toBe('P');
  });

  it('drops queued tasks of a stopped agent without running them', async () => {
    const { system } = trackedSystem();
    const model = slow();
    const worker = system.spawn('worker', { model });
    const first = worker.ask('first').catch((e: unknown) => e);
    const second = worker.ask('second').catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1);
    worker.stop();
    expect(await first).toMatchObject({ code: 'agent_stopped' });
    expect(await second).toMatchObject({ code: 'agent_stopped' });
    await vi.advanceTimersByTimeAsync(120_000);
    expect(model.calls).toHaveLength(1);
    expect(worker.actor.getSnapshot().status).toBe('stopped');
  });

  it('cancels a delegation in flight when everything stops, quietly', async () => {
    const warn = vi.spyOn(console, 'warn');
    const { system, actors } = trackedSystem();
    const b = system.spawn('b', { model: slow() });
    system.spawn('a', { model: scriptedModel([{ toolCalls: [{ name: 'delegate_to_b', arguments: { task: 'x' } }] }]), tools: [system.delegateTool('b')] });
    const answer = system.ask('a', 'go').catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1);
    expect(b.actor.getSnapshot().context.running.map((t) => t.kind)).toEqual(['delegate']);
    const bJournal = b.agent.journal;

    system.stopAll();

    expect(await answer).toMatchObject({ code: 'agent_stopped' });
    expect(bJournal.entries().flatMap((e) => (e.event.type === 'run.terminated' ? [e.event.reason] : []))).toEqual(['cancelled']);
    await vi.advanceTimersByTimeAsync(1);
    expect(activeActors(actors)).toEqual([]);
    // Nothing was sent to an actor that had already stopped.
    expect(warn).not.toHaveBeenCalled();
    warn.mockRestore();
  });

  it('settles an ask sent as an agent that is stopped meanwhile with the answer, though the reply has no mailbox to go to', async () => {
    const { system } = trackedSystem();
    system.spawn('a', { model: slow() });
    const b = system.spawn('b', { model: scriptedModel([{ text: 'B answers', delayMs: 1_000 }]) });
    const settled: unknown[] = [];
    const answer = system.ask('b', 'work', { from: 'a' }).then(
      (result) => settled.push(result.text),
      (error: unknown) => settled.push(error),
    );
    await vi.advanceTimersByTimeAsync(1);
    expect(b.actor.getSnapshot().context.running).toHaveLength(1);

    system.stop('a');
    // B finishes its task, but the asker's mailbox is gone: the host cannot send it the reply.
    await vi.advanceTimersByTimeAsync(2_000);
    await answer;

    expect(settled).toEqual(['B answers']);
  });

  it('also cancels runs the agent started outside the system', async () => {
    const { system } = trackedSystem();
    const worker = system.spawn('worker', { model: slow() });
    const direct = worker.agent.start('outside the mailbox');
    worker.stop();
    const result: LoopResult = await direct.settled;
    expect(result.status).toBe('cancelled');
  });
});
