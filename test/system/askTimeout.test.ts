/**
 * An ask that outlives its timeoutMs: a typed AgentSystemError (ask_timeout), the asked task cancelled (its run
 * aborted, or dropped from the queue), and no timer left behind — answered asks included.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { scriptedModel } from '../../src/testing/index.ts';
import { trackedSystem } from './helpers.ts';
import type { AgentSystemError } from '../../src/system/errors.ts';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('ask timeout', () => {
  it('rejects with AgentSystemError (ask_timeout) after timeoutMs and cancels the asked run', async () => {
    const { system } = trackedSystem();
    const model = scriptedModel([{ text: 'too late', delayMs: 10_000 }]);
    const worker = system.spawn('worker', { model });

    const answer = system.ask('worker', 'slow task', { timeoutMs: 50 });
    const outcome = answer.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(49);
    expect(worker.actor.getSnapshot().context.running).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);

    const error = await outcome;
    expect(error).toMatchObject({ code: 'ask_timeout' });
    expect(error).toMatchObject({ code: 'ask_timeout', agentId: 'worker', timeoutMs: 50 });
    const timeout = error as AgentSystemError;
    // The run had started: the error carries its cancelled result, and the journal agrees.
    expect(timeout.result).toMatchObject({ status: 'cancelled', reason: 'cancelled', agentId: 'worker' });
    expect(timeout.runId).toBe(timeout.result?.runId);
    const end = worker.agent.journal.entries(timeout.runId).find((e) => e.event.type === 'run.terminated');
    expect(end?.event).toMatchObject({ reason: 'cancelled' });
    expect(model.calls[0]?.signal?.aborted).toBe(true);
    expect(worker.actor.getSnapshot().value).toBe('idle');
    // No dangling timers: the model's delay, the run's wall clock and the ask deadline are all gone.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('drops a queued ask that times out before it starts, leaving the running one alone', async () => {
    const { system } = trackedSystem();
    const model = scriptedModel(() => ({ text: 'answer', delayMs: 100 }));
    const worker = system.spawn('worker', { model });

    const first = system.ask('worker', 'first', { timeoutMs: 1_000 });
    const second = system.ask('worker', 'second', { timeoutMs: 30 }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(30);

    const error = await second;
    expect(error).toMatchObject({ code: 'ask_timeout' });
    expect((error as AgentSystemError).result).toBeUndefined();
    expect((error as AgentSystemError).message).toMatch(/still queued/);
    expect(worker.actor.getSnapshot().context.queue).toEqual([]);

    await vi.advanceTimersByTimeAsync(70);
    await expect(first).resolves.toMatchObject({ text: 'answer' });
    expect(model.calls).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('clears the deadline when the answer comes first', async () => {
    const { system } = trackedSystem();
    system.spawn('worker', { model: scriptedModel([{ text: 'quick', delayMs: 10 }]) });
    const answer = system.ask('worker', 'task', { timeoutMs: 60_000 });
    await vi.advanceTimersByTimeAsync(10);
    await expect(answer).resolves.toMatchObject({ text: 'quick' });
    expect(vi.getTimerCount()).toBe(0);
  });
});
