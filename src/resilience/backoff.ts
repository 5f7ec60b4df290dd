/** Shared by provider retries and tool recovery: one definition of "wait before trying again". */
import { DEFAULTS } from '../core/defaults.ts';
import type { Cancellation } from '../core/run.ts';

export interface BackoffOptions {
  readonly baseDelayMs?: number;
  /** Jitter included. */
  readonly maxDelayMs?: number;
  /** Fraction of the delay randomised either way: 0.25 = ±25 %. */
  readonly jitter?: number;
}

/** `attempt` 1 is the first retry; the cap applies before and after the jitter. */
export function backoffDelay(attempt: number, options: BackoffOptions = {}, random: () => number = Math.random): number {
  const base = options.baseDelayMs ?? DEFAULTS.retry.baseDelayMs;
  const cap = options.maxDelayMs ?? DEFAULTS.retry.maxDelayMs;
  const jitter = options.jitter ?? DEFAULTS.retry.jitter;
  const exponential = Math.min(cap, base * 2 ** Math.max(0, attempt - 1));
  const spread = exponential * jitter * (random() * 2 - 1);
  return Math.max(0, Math.min(cap, Math.round(exponential + spread)));
}

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
