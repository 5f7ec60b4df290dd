/**
 * runWithTimeout: the deadline and cancellation contract, plus what makes it cheap — the work's
 * signal exists only once read, and synchronous work gets no timer and no listener.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runWithTimeout } from '../../src/executor/timeout.ts';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('runWithTimeout', () => {
  it('returns a synchronous result without a timer, a listener or a signal', async () => {
    vi.useFakeTimers();
    const parent = new AbortController().signal;
    const added = vi.spyOn(parent, 'addEventListener');
    const created = vi.spyOn(globalThis, 'AbortController');
    const pending = runWithTimeout(() => 42, 1_000, parent);
    expect(vi.getTimerCount()).toBe(0);
    expect(await pending).toEqual({ ok: true, value: 42 });
    expect(added).not.toHaveBeenCalled();
    expect(created).not.toHaveBeenCalled();
  });

  it('hands the work a live signal when it reads one', async () => {
    let seen: AbortSignal | undefined;
    const result = await runWithTimeout((signal) => {
      seen = signal();
      return Promise.resolve('ok');
    }, 1_000, new AbortController().signal);
    expect(result).toEqual({ ok: true, value: 'ok' });
    expect(seen).toBeInstanceOf(AbortSignal);
    expect(seen?.aborted).toBe(false);
  });

  it('times out async work that ignores its signal, and a signal read afterwards is already aborted', async () => {
    vi.useFakeTimers();
    let signalOf: (() => AbortSignal) | undefined;
    const pending = runWithTimeout((signal) => {
      signalOf = signal;
      return new Promise<never>(() => undefined);
    }, 50, new AbortController().signal);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(50);
    const result = await pending;
    expect(result).toMatchObject({ ok: false, timedOut: true });
    const late = signalOf?.();
    expect(late?.aborted).toBe(true);
    expect(late?.reason).toMatchObject({ name: 'TimeoutError' });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('aborts a signal the work already holds when the deadline passes', async () => {
    vi.useFakeTimers();
    let held: AbortSignal | undefined;
    const pending = runWithTimeout((signal) => {
      held = signal();
      return new Promise<never>(() => undefined);
    }, 20, new AbortController().signal);
    await vi.advanceTimersByTimeAsync(20);
    await pending;
    expect(held?.aborted).toBe(true);
  });

  it('settles with the parent reason when the parent aborts mid-work, and removes its listener', async () => {
    const parent = new AbortController();
    const removed = vi.spyOn(parent.signal, 'removeEventListener');
    let held: AbortSignal | undefined;
    const pending = runWithTimeout((signal) => {
      held = signal();
      return new Promise<never>(() => undefined);
    }, 60_000, parent.signal);
    parent.abort(new Error('cancelled'));
    expect(await pending).toEqual({ ok: false, timedOut: false, error: new Error('cancelled') });
    expect(held?.aborted).toBe(true);
    expect(removed).toHaveBeenCalledTimes(1);
  });

  it('lets a cancellation raised by synchronous work win over its result', async () => {
    const parent = new AbortController();
    const result = await runWithTimeout(() => {
      parent.abort('stop');
      return 'value';
    }, 1_000, parent.signal);
    expect(result).toEqual({ ok: false, timedOut: false, error: 'stop' });
  });

  it('does not start work under an already aborted parent', async () => {
    const parent = new AbortController();
    parent.abort('gone');
    const work = vi.fn(() => 1);
    expect(await runWithTimeout(work, 1_000, parent.signal)).toEqual({ ok: false, timedOut: false, error: 'gone' });
    expect(work).not.toHaveBeenCalled();
  });

  it('turns a synchronous throw or a rejection into an error result', async () => {
    const parent = new AbortController().signal;
    const boom = new Error('boom');
    expect(await runWithTimeout(() => {
      throw boom;
    }, 1_000, parent)).toEqual({ ok: false, timedOut: false, error: boom });
    expect(await runWithTimeout(() => Promise.reject(boom), 1_000, parent)).toEqual({ ok: false, timedOut: false, error: boom });
  });
});
