/**
 * `StrategyResult`: what a strategy run produced, whichever way it ended.
 */
import type { JournalEntry } from '../core/loopEvent.ts';
import type { RunResult } from '../core/run.ts';
import type { Thought } from '../core/strategy.ts';

/**
 * A `RunResult` (the fields an agent run and a system ask resolve with too) plus what only a
 * strategy run has. `reason` is the journal's: `final_answer`, `error` (the strategy decided it
 * failed, or one of its calls threw), `max_iterations` (the `maxRounds` guard), `timeout`,
 * `cancelled`. An error decision and a thrown call are both `error` and `StrategyRunError` (`strategy_failed`);
 * the thrown value is `cause`, which an error decision has none of. The other failures keep
 * their own codes (`strategy_max_rounds`, `strategy_timeout`, `strategy_cancelled`).
 *
 * @example
 * ```ts
 * const result: StrategyResult = await runStrategy({ strategy: strategies.vote({ samples: 5 }), task, subAgent, model });
 * console.log(result.text, result.iterations, result.usage.totalTokens);
 * ```
 */
export interface StrategyResult extends RunResult {
  /** The strategy's name (`ReasoningStrategy.name`), e.g. `vote`. */
  readonly strategy: string;
  /** Every thought: `continue` thoughts and branch results (failed branches with `metadata.error`), in order. */
  readonly thoughts: readonly Thought[];
  /** The most branches that ran at once. */
  readonly peakConcurrency: number;
  /**
   * Every journal entry of the run in order: the runner's own (`run.started`, `strategy.decided`,
   * `branch.started`/`branch.finished`, `run.terminated`) and, interleaved, those of each branch's
   * sub-agent run (their own `runId`s). The same `JournalEntry` type an agent's and a system's
   * `events$` carry, so one reader handles all three.
   */
  readonly events: readonly JournalEntry[];
}
