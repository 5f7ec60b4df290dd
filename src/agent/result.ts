/**
 * Whether a run that failed can be resumed.
 */
import { InferenceError } from '../inference/errors.ts';
import { ReplayMismatchError } from '../persistence/errors.ts';

/**
 * Whether a run that ended for `reason` (with `error`) failed for a reason outside its own
 * logic: its wall-clock limit, a provider failure (an outage, the network, exhausted retries, a
 * rejected key), or a resume with another configuration than the run's. A final answer, a
 * cancellation, the run's limits and the model's behaviour are final.
 *
 * @example
 * ```ts
 * isResumableFailure('timeout', undefined); // true
 * isResumableFailure('max_iterations', undefined); // false
 * ```
 */
export function isResumableFailure(reason: string | undefined, error: unknown): boolean {
  if (reason === 'timeout') return true;
  if (reason !== 'error') return false;
  // A resume with another agent configuration than the run's: resumed again with the right one, it goes on.
  if (error instanceof ReplayMismatchError) return true;
  return error instanceof InferenceError && (error.blame === 'provider' || error.code === 'authentication');
}
