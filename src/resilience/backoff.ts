/**
 * Exponential backoff with jitter, shared by provider retries and tool recovery so there is
 * one definition of "wait before trying again".
 */
import { DEFAULTS } from '../core/defaults.ts';
import type { Cancellation } from '../core/run.ts';

export interface BackoffOptions {
  /** Delay before the first retry, in ms. */
  readonly baseDelayMs?: number;
  /** No delay exceeds this, in ms (jitter included). */
  readonly maxDelayMs?: number;
  /** Fraction of the delay randomised either way: 0.25 = ±25 %. */
  readonly jitter?: number;
}

/**
 * Delay before retry number `attempt` (1 = first retry): `base · 2^(attempt-1)`, capped,
 * then spread by ±jitter and capped again.
 *
 * @example
 * ```ts
 * backoffDelay(3, { baseDelayMs: 1000, jitter: 0 }); // 4000
 * ```
 */
export function backoffDelay(attempt: number, options: BackoffOptions = {}, random: () => number = Math.random): number {
  const base = options.baseDelayMs ?? DEFAULTS.retry.baseDelayMs;
  const cap = options.maxDelayMs ?? DEFAULTS.retry.maxDelayMs;
  const jitter = options.jitter ?? DEFAULTS.retry.jitter;
  const exponential = Math.min(cap, base * 2 ** Math.max(0, attempt - 1));
  const spread = exponential * jitter * (random() * 2 - 1);
  return Math.max(0, Math.min(cap, Math.round(exponential + spread)));
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: Cancellation): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
