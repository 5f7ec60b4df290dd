/**
 * `LoopResult`: what a run produced, whichever way it ended.
 */
import type { Message } from '../conversation/messages.ts';
import type { ErrorData, TerminationReason } from '../events/loopEvent.ts';
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
}
