/**
 * `StrategyResult`: what a strategy run produced, whichever way it ended.
 */
import type { ErrorData, JournalEntry } from '../core/loopEvent.ts';
import type { Usage } from '../core/provider.ts';
import type { StrategyEndReason } from '../../machines/strategy.types.ts';
import type { Thought } from '../core/strategy.ts';

/**
 * @example
 * ```ts
 * const result: StrategyResult = await runStrategy({ strategy: strategies.vote({ samples: 5 }), task, subAgent, model });
 * console.log(result.answer, result.rounds, result.usage.totalTokens);
 * ```
 */
export interface StrategyResult {
  readonly runId: string;
  readonly strategy: string;
  /** `done` with an answer, `failed` (error decision, exception, max rounds, timeout), `cancelled`. */
  readonly status: 'done' | 'failed' | 'cancelled';
  readonly reason: StrategyEndReason;
  /** The answer; `null` unless `status` is `done`. */
  readonly answer: string | null;
  /** Every thought: `continue` thoughts and branch results (failed branches with `metadata.error`), in order. */
  readonly thoughts: readonly Thought[];
  /** Decisions made. */
  readonly rounds: number;
  /** Summed over every branch run and every direct completion (`context.complete`). */
  readonly usage: Usage;
  /** USD, summed over the same calls as `usage` (zero for a model without prices). */
  readonly costUsd: number;
  /** The most branches that ran at once. */
  readonly peakConcurrency: number;
  readonly durationMs: number;
  /**
   * Every journal entry of the run in order: the runner's own (`run.started`, `strategy.decided`,
   * `branch.started`/`branch.finished`, `run.terminated`) and, interleaved, those of each branch's
   * sub-agent run (their own `runId`s).
   */
  readonly events: readonly JournalEntry[];
  readonly error?: ErrorData;
  /** The thrown value behind `error`, when there was one. */
  readonly cause?: unknown;
}
