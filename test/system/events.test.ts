/**
 * One system-wide stream: every agent's journal entries with their agent ids, plus the messages
 * between agents — and a subscriber that throws breaks nothing.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { trackedSystem } from './helpers.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('system events$', () => {
  it('carries the entries of every agent, with their agent ids, and the messages between them', async () => {
    const { system } = trackedSystem();
    const seen: JournalEntry[] = [];
    system.events$.subscribe((entry) => seen.push(entry));
    system.spawn('a', { model: scriptedModel([{ text: 'from a' }]) });
    system.spawn('b', { model: scriptedModel([{ text: 'from b' }]) });

    const [ra, rb] = await Promise.all([system.ask('a', 'task a'), system.ask('b', 'task b', { from: 'a' })]);

    for (const [id, result] of [['a', ra], ['b', rb]] as const) {
      const ofRun = seen.filter((e) => e.runId === result.runId && e.agentId === id).map((e) => e.event.type);
      expect(ofRun, id).toContain('run.started');
      expect(ofRun, id).toContain('run.terminated');
      // Exactly what the agent's own journal holds for that run, in the same order.
      expect(ofRun, id).toEqual(system.get(id).agent.journal.entries(result.runId).map((e) => e.event.type));
    }
    const messages = seen.filter((e) => e.event.type === 'agent.message').map((e) => e.agentId + ':' + (e.event.type === 'agent.message' ? e.event.kind : ''));
    // b's ask from a is on both sides; a's ask from outside only on a's.
    expect(messages.sort()).toEqual(['a:ask', 'a:ask', 'a:reply', 'a:reply', 'b:ask', 'b:reply'].sort());
  });

  it('keeps running, and keeps feeding other subscribers, when a subscriber throws', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const { system } = trackedSystem();
    let thrown = 0;
    system.events$.subscribe(() => {
      thrown++;
      throw new Error('subscriber bug');
    });
    const seen: JournalEntry[] = [];
    system.events$.subscribe((entry) => seen.push(entry));
    system.spawn('a', { model: scriptedModel([{ text: 'one' }, { text: 'two' }]) });

    await expect(system.ask('a', 'first')).resolves.toMatchObject({ text: 'one' });
    await expect(system.ask('a', 'second')).resolves.toMatchObject({ text: 'two' });

    expect(thrown).toBe(seen.length);
    expect(seen.filter((e) => e.event.type === 'run.terminated')).toHaveLength(2);
    // RxJS reports subscriber errors from a timer; they reach our handler, not the process, which says it once.
    await vi.waitFor(() => expect(warn).toHaveBeenCalled());
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(thrown).toBeGreaterThanOrEqual(10);
    expect(warn.mock.calls).toEqual([['[actorloop] an events$ subscriber threw Error: subscriber bug (the run continues; further errors from it are not reported)']]);
    expect(system.get('a').actor.getSnapshot().status).toBe('active');
  });
});
