/**
 * `LoopResult`: what a run produced, whichever way it ended.
 */
import type { Message } from '../conversation/messages.ts';
import type { ErrorData, TerminationReason } from '../events/loopEvent.ts';
import { InferenceError } from '../inference/errors.ts';
import { ReplayMismatchError } from '../persistence/errors.ts';
import type { Usage } from '../inference/provider.ts';

export interface LoopResult {
  readonly runId: string;
  readonly agentId: string;
  /** `done` with a final answer, `failed` on a limit or error, `cancelled` by the caller. */
  readonly status: 'done' | 'failed' | 'cancelled';
  readonly reason: TerminationReason;
  /** The final answer text (the last model reply when the run did not finish). */
  readonly text: string | null;
  /** Completed reasoning iterations (model calls). */
  readonly iterations: number;
  readonly usage: Usage;
  readonly costUsd: number;
  readonly messages: readonly Message[];
  readonly durationMs: number;
  /** What went wrong, JSON-safe, when the run did not finish with an answer. */
  readonly error?: ErrorData;
  /** The original thrown value behind `error`, when there was one. */
  readonly cause?: unknown;
  /**
   * The run failed for a reason outside its own logic (the provider was down or refused the
   * key, the network failed, its wall-clock limit passed) and a store kept it: `agent.resume(runId)`
   * continues it, with a fresh wall-clock budget, once the cause is gone.
   */
  readonly resumable?: true;
}

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
