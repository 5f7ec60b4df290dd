/**
 * The one retry policy of model calls. The `openai` client's own retries are switched off
 * (`maxRetries: 0`) so that every attempt goes through here: one place decides, one place
 * reports attempts (`onRetry`, for the journal), one place honours Retry-After.
 */
import { DEFAULTS } from '../core/defaults.ts';
import { describeError } from '../core/errors.ts';
import { backoffDelay, sleep } from '../resilience/backoff.ts';
import type { BackoffOptions } from '../resilience/backoff.ts';
import { InferenceError } from './errors.ts';
import type { CompletionRequest, RetryInfo } from '../core/provider.ts';

export interface RetryOptions extends BackoffOptions {
  /** Retries after the first attempt (default 3, so at most 4 requests). */
  readonly maxRetries?: number;
  /** A server-requested wait longer than this is cut to this, in ms (default 60 s). */
  readonly maxRetryAfterMs?: number;
  /** Aborting stops at once — mid-attempt or mid-wait — and rejects with `signal.reason`. */
  readonly signal?: AbortSignal;
  /** Called before each wait; use it to journal attempts. */
  readonly onRetry?: (info: RetryInfo) => void;
  /** Source of jitter, in [0, 1); tests pin it. */
  readonly random?: () => number;
  /** Which failures are worth another attempt (default `isRetryable`). */
  readonly shouldRetry?: (error: unknown) => boolean;
}

/**
 * The default retry decision: typed inference errors that say `retryable` — rate limits (not
 * exhausted quota), 5xx, timeouts, network failures, garbled replies, and streams cut before
 * anything was yielded. Never 400/401/403, context length, structured output or cancellation.
 *
 * @example
 * ```ts
 * isRetryable(InferenceError.server('boom', { status: 503 })); // true
 * isRetryable(new AuthenticationError('bad key'));       // false
 * ```
 */
export function isRetryable(error: unknown): boolean {
  return error instanceof InferenceError && error.retryable;
}

/**
 * Run `fn` until it succeeds, a failure is not retryable, or `maxRetries` retries are spent;
 * then rethrow the last error unchanged. Waits `backoffDelay` between attempts (exponential,
 * jittered, capped), or exactly the server's Retry-After when the error carries one (capped at
 * `maxRetryAfterMs`).
 *
 * @example
 * ```ts
 * const reply = await withRetry((attempt) => callModel(attempt), {
 *   maxRetries: 3, signal, onRetry: ({ attempt, delayMs }) => console.log(`retry ${attempt} in ${delayMs} ms`),
 * });
 * ```
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const maxRetries = options.maxRetries ?? DEFAULTS.retry.maxRetries;
  const shouldRetry = options.shouldRetry ?? isRetryable;
  const signal = options.signal;
  for (let attempt = 0; ; attempt++) {
    if (signal?.aborted) throw signal.reason;
    try {
      return await fn(attempt);
    } catch (error) {
      // Whatever the attempt failed with, a cancelled call reports the cancellation.
      if (signal?.aborted) throw signal.reason;
      if (attempt >= maxRetries || !shouldRetry(error)) throw error;
      const delayMs = retryDelay(error, attempt + 1, options);
      options.onRetry?.({
        attempt: attempt + 1,
        delayMs,
        error: error instanceof Error ? error : new Error(describeError(error)),
      });
      await sleep(delayMs, signal);
    }
  }
}

/**
 * The wait before retry number `attempt` (1 = first retry) after `error`.
 *
 * @example
 * ```ts
 * retryDelay(new RateLimitError('slow down', { retryAfterMs: 20 }), 1); // 20
 * ```
 */
export function retryDelay(error: unknown, attempt: number, options: RetryOptions = {}): number {
  const requested = retryAfterOf(error);
  if (requested !== undefined) return Math.min(requested, options.maxRetryAfterMs ?? DEFAULTS.retry.maxRetryAfterMs);
  return backoffDelay(attempt, options, options.random);
}

function retryAfterOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('retryAfterMs' in error)) return undefined;
  const value = error.retryAfterMs;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** A provider's retry policy for one request: the request's abort signal and retry reporting on top. */
export function requestRetry(retry: RetryOptions | undefined, request: CompletionRequest<unknown>): RetryOptions {
  return {
    ...retry,
    ...(request.signal === undefined ? {} : { signal: request.signal }),
    ...(request.onRetry === undefined ? {} : { onRetry: request.onRetry }),
  };
}
