import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AuthenticationError, ContextLengthError, RateLimitError, StructuredOutputError, isRetryable, parseRetryAfter, retryDelay, withRetry } from '../../src/inference/index.ts';
import type { RetryInfo } from '../../src/inference/index.ts';
import { InferenceError } from '../../src/inference/errors.ts';

/** A function failing with the given errors in turn, then returning 'ok'. */
function failing(...errors: unknown[]) {
  const fn = vi.fn(async (_attempt: number) => {
    const error = errors.shift();
    if (error !== undefined) throw error;
    return 'ok';
  });
  return fn;
}

describe('withRetry', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('waits base·2^(n-1) between attempts and rethrows after maxRetries retries', async () => {
    const error = InferenceError.server('boom', { status: 500 });
    const fn = failing(error, error, error, error, error);
    const retries: RetryInfo[] = [];
    const pending = withRetry(fn, { baseDelayMs: 1_000, jitter: 0, onRetry: (info) => retries.push(info) });
    const outcome = pending.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(999);
    expect(fn).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(fn).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(2_000 + 4_000);
    expect(await outcome).toBe(error);
    expect(fn).toHaveBeenCalledTimes(4);
    expect(fn.mock.calls.map(([attempt]) => attempt)).toEqual([0, 1, 2, 3]);
    expect(retries.map(({ attempt, delayMs }) => [attempt, delayMs])).toEqual([[1, 1_000], [2, 2_000], [3, 4_000]]);
  });

  it('uses the defaults of src/defaults.ts: 3 retries, 1 s base, ±25 % jitter', async () => {
    const delays: number[] = [];
    const error = InferenceError.network('reset');
    const outcome = withRetry(failing(error, error, error, error), { random: () => 0, onRetry: ({ delayMs }) => delays.push(delayMs) }).catch((e: unknown) => e);
    await vi.runAllTimersAsync();
    expect(await outcome).toBe(error);
    expect(delays).toEqual([750, 1_500, 3_000]);
  });

  it('keeps jitter within ±jitter and delays within maxDelayMs', () => {
    const error = InferenceError.server('boom', { status: 502 });
    expect(retryDelay(error, 1, { baseDelayMs: 1_000, jitter: 0.25, random: () => 0 })).toBe(750);
    expect(retryDelay(error, 1, { baseDelayMs: 1_000, jitter: 0.25, random: () => 0.999_999 })).toBe(1_250);
    expect(retryDelay(error, 10, { baseDelayMs: 1_000, maxDelayMs: 30_000, jitter: 0.25, random: () => 0.999_999 })).toBe(30_000);
  });

  it('waits exactly the Retry-After an error carries, capped at maxRetryAfterMs', async () => {
    const delays: number[] = [];
    const fn = failing(new RateLimitError('slow down', { retryAfterMs: 2_500 }), InferenceError.server('busy', { status: 503, retryAfterMs: 90_000 }));
    const pending = withRetry(fn, { baseDelayMs: 1, maxRetryAfterMs: 10_000, onRetry: ({ delayMs }) => delays.push(delayMs) });
    await vi.advanceTimersByTimeAsync(2_499);
    expect(fn).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1 + 10_000);
    expect(await pending).toBe('ok');
    expect(delays).toEqual([2_500, 10_000]);
  });

  it.each([
    ['rate limit', new RateLimitError('slow down')],
    ['server error', InferenceError.server('boom', { status: 500 })],
    ['timeout', InferenceError.timeout(100)],
    ['network', InferenceError.network('reset')],
    ['invalid response', InferenceError.invalidResponse('garbled')],
    ['stream cut before any delta', InferenceError.streamInterrupted('cut', { deltasYielded: false })],
  ])('retries a %s', async (_label, error) => {
    const fn = failing(error);
    const pending = withRetry(fn, { baseDelayMs: 10 });
    await vi.runAllTimersAsync();
    expect(await pending).toBe('ok');
    expect(fn).toHaveBeenCalledTimes(2);
    expect(isRetryable(error)).toBe(true);
  });

  it.each([
    ['authentication', new AuthenticationError('bad key', { status: 401 })],
    ['context length', new ContextLengthError('too long', { status: 400 })],
    ['bad request', InferenceError.badRequest('nope', { status: 400 })],
    ['exhausted quota', new RateLimitError('quota', { quotaExhausted: true })],
    ['structured output', new StructuredOutputError('out', [], 'x')],
    ['cancellation', InferenceError.cancelled()],
    ['stream cut after deltas', InferenceError.streamInterrupted('cut', { deltasYielded: true })],
    ['plain Error', new Error('bug')],
    ['string', 'oops'],
  ])('never retries a %s', async (_label, error) => {
    const fn = failing(error);
    await expect(withRetry(fn, { baseDelayMs: 10 })).rejects.toBe(error);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('stops at once, with the abort reason, when aborted during a wait', async () => {
    const controller = new AbortController();
    const fn = failing(InferenceError.network('reset'), InferenceError.network('reset'));
    const outcome = withRetry(fn, { baseDelayMs: 10_000, signal: controller.signal }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(100);
    controller.abort(new Error('stop'));
    expect(await outcome).toEqual(new Error('stop'));
    expect(fn).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('reports the abort reason, not the attempt error, when aborted mid-attempt', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled by user');
    const fn = vi.fn(async () => {
      controller.abort(reason);
      throw InferenceError.network('aborted fetch');
    });
    await expect(withRetry(fn, { signal: controller.signal })).rejects.toBe(reason);
    expect(fn).toHaveBeenCalledTimes(1);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');

  it('reads delta-seconds, fractions and retry-after-ms (which wins)', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after': '2' }), now)).toBe(2_000);
    expect(parseRetryAfter(new Headers({ 'retry-after': '0.25' }), now)).toBe(250);
    expect(parseRetryAfter(new Headers({ 'retry-after': '2', 'retry-after-ms': '20' }), now)).toBe(20);
  });

  it('reads an HTTP date relative to now, a past date as 0', () => {
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:07 GMT' }), now)).toBe(7_000);
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Tue, 31 Dec 2024 23:00:00 GMT' }), now)).toBe(0);
  });

  it('ignores missing and unusable values', () => {
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter(new Headers())).toBeUndefined();
    for (const value of ['', 'soon', '-5', '1e3']) expect(parseRetryAfter(new Headers({ 'retry-after': value }), now)).toBeUndefined();
  });
});
