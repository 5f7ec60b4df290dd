import type { JournalEntry } from '../core/loopEvent.ts';
import type { RunResult } from '../core/run.ts';
import type { Thought } from '../core/strategy.ts';

/** An error decision and a thrown call both end `error` (a `StrategyRunError`, code `strategy_failed`); only the thrown one has a `cause`. */
export interface StrategyResult extends RunResult {
  readonly strategy: string;
  /** Failed branches' thoughts carry `metadata.error`. */
  readonly thoughts: readonly Thought[];
  readonly peakConcurrency: number;
  /** The runner's entries interleaved with those of each branch's sub-agent run (their own `runId`s). */
  readonly events: readonly JournalEntry[];
}
