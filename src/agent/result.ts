/**
 * Whether a run that failed can be resumed, and the result of one that failed before its loop could.
 */
import type { ErrorData } from '../core/loopEvent.ts';
import type { Message } from '../core/messages.ts';
import type { LoopResult } from '../core/run.ts';
import { InferenceError } from '../inference/errors.ts';
import { ConfigurationError } from '../core/errors.ts';

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
  if (error instanceof ConfigurationError && error.code === 'replay_mismatch') return true;
  return error instanceof InferenceError && (error.blame === 'provider' || error.code === 'authentication');
}

/**
 * The result of a run that failed outside its loop, before or without a step of its own (its
 * actor failed, its row was corrupt, it could not be queued): no iterations, no usage.
 *
 * @example
 * ```ts
 * failedResult('run_1', 'agent_1', { name: 'Error', code: 'actor_error', message: 'boom' }); // status 'failed', reason 'error'
 * ```
 */
export function failedResult(
  runId: string,
  agentId: string,
  error: ErrorData,
  extra: { readonly cause?: unknown; readonly messages?: readonly Message[]; readonly durationMs?: number } = {},
): LoopResult {
  return {
    runId,
    agentId,
    status: 'failed',
    reason: 'error',
    text: null,
    iterations: 0,
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    costUsd: 0,
    messages: extra.messages ?? [],
    durationMs: extra.durationMs ?? 0,
    error,
    ...(extra.cause === undefined ? {} : { cause: extra.cause }),
  };
}
