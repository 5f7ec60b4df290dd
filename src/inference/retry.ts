/** The `openai` client's own retries are off, so every attempt goes through here: one place decides, reports and honours Retry-After. */
import { DEFAULTS } from '../core/defaults.ts';
import { describeError } from '../core/errors.ts';
import { backoffDelay, sleep } from '../resilience/backoff.ts';
import type { BackoffOptions } from '../resilience/backoff.ts';
import { InferenceError } from './errors.ts';
import type { CompletionRequest, RetryInfo } from '../core/provider.ts';

export interface RetryOptions extends BackoffOptions {
  /** Retries after the first attempt (default 3, so at most 4 requests). */
  readonly maxRetries?: number;
  /** A longer server-requested wait is cut to this (default 60 s). */
  readonly maxRetryAfterMs?: number;
  readonly signal?: AbortSignal;
  /** Called before each wait; use it to journal attempts. */
  readonly onRetry?: (info: RetryInfo) => void;
  readonly random?: () => number;
  readonly shouldRetry?: (error: unknown) => boolean;
}

/** Never 400/401/403, context length, structured output or cancellation. */
export function isRetryable(error: unknown): boolean {
  return error instanceof InferenceError && error.retryable;
}

/** Rethrows the last error unchanged; waits exactly the server's Retry-After when the error carries one. */
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

export function requestRetry(retry: RetryOptions | undefined, request: CompletionRequest<unknown>): RetryOptions {
  return {
    ...retry,
    ...(request.signal === undefined ? {} : { signal: request.signal }),
    ...(request.onRetry === undefined ? {} : { onRetry: request.onRetry }),
  };
}
