import type { ErrorData } from '../core/loopEvent.ts';
import type { Message } from '../core/messages.ts';
import type { LoopResult } from '../core/run.ts';
import { InferenceError } from '../inference/errors.ts';
import { ConfigurationError } from '../core/errors.ts';
import { defined } from '../core/defined.ts';

/** Failed for a reason outside the run's own logic (its wall clock, the provider, another configuration): a resume may go on. */
export function isResumableFailure(reason: string | undefined, error: unknown): boolean {
  if (reason === 'timeout') return true;
  if (reason !== 'error') return false;
  // A resume with another agent configuration than the run's: resumed again with the right one, it goes on.
  if (error instanceof ConfigurationError && error.code === 'replay_mismatch') return true;
  return error instanceof InferenceError && (error.blame === 'provider' || error.code === 'authentication');
}

/** A run that failed before or without a step of its own: no iterations, no usage. */
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
    ...defined({ cause: extra.cause }),
  };
}
