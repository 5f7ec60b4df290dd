/**
 * Typed errors of pre-hydration. They never fail a run: a reference that cannot be resolved is
 * counted as failed and named in the injected context; these errors are the abort reasons and
 * failure descriptions that explain why.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';

/**
 * The pre-hydration deadline passed before a reference resolved. It is the reason of the
 * AbortSignal every still-running resolver receives.
 *
 * @example
 * ```ts
 * new PreHydrationTimeoutError(15_000).message; // 'Pre-hydration did not finish within 15000 ms; …'
 * ```
 */
export class PreHydrationTimeoutError extends ActorloopError {
  declare readonly code: 'prehydration_timeout';
  readonly timeoutMs: number;

  constructor(timeoutMs: number, options?: ActorloopErrorOptions) {
    super(
      'prehydration_timeout',
      `Pre-hydration did not finish within ${timeoutMs} ms; the reference was left out. Raise preHydration.timeoutMs or make the resolver faster.`,
      options,
    );
    this.timeoutMs = timeoutMs;
  }

  override toJSON() {
    return { ...super.toJSON(), timeoutMs: this.timeoutMs };
  }
}
