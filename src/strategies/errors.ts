/**
 * Why a strategy run did not end with an answer. Each error carries the run's
 * `StrategyResult` (thoughts so far, iterations, usage, events) and its `runId`.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';
import type { CodesOf } from '../core/errorCodes.ts';
import type { StrategyResult } from './result.ts';

interface StrategyRunErrorOptions extends ActorloopErrorOptions {
  readonly result: StrategyResult;
}

/**
 * What a strategy run rejects with; `result` holds what the run produced, and `code` says why it
 * ended without an answer:
 * - `strategy_failed`: the strategy decided it failed (an `error` decision, e.g. every branch
 *   failed) or one of its calls threw; `result.thoughts` shows what the branches said;
 * - `strategy_max_rounds`: it made `maxRounds` decisions without finishing; raise `maxRounds`,
 *   or lower the strategy's own depth, steps or revisions;
 * - `strategy_timeout`: it ran past `timeoutMs` and its branches were stopped;
 * - `strategy_cancelled`: the caller cancelled the run (`run.cancel()` or the `signal`).
 *
 * A strategy that returns something that is not a decision is a `ConfigurationError` with code
 * `invalid_decision`.
 *
 * @example
 * ```ts
 * run.result.catch((e) => { if (e instanceof StrategyRunError) console.log(e.code, e.result.reason, e.result.iterations); });
 * ```
 */
export class StrategyRunError extends ActorloopError {
  declare readonly code: CodesOf<'StrategyRunError'>;
  readonly result: StrategyResult;
  constructor(code: CodesOf<'StrategyRunError'>, message: string, options: StrategyRunErrorOptions) {
    super(code, message, { ...options, runId: options.result.runId });
    this.result = options.result;
  }
}
