/**
 * Why a strategy run did not end with an answer. Each error carries the run's
 * `StrategyResult` (thoughts so far, iterations, usage, events) and its `runId`.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';
import type { StrategyResult } from './result.ts';

interface StrategyRunErrorOptions extends ActorloopErrorOptions {
  readonly result: StrategyResult;
}

/**
 * Base of the errors a strategy run rejects with; `result` holds what the run produced.
 *
 * @example
 * ```ts
 * run.result.catch((e) => { if (e instanceof StrategyRunError) console.log(e.code, e.result.reason, e.result.iterations); });
 * ```
 */
export abstract class StrategyRunError extends ActorloopError {
  readonly result: StrategyResult;
  constructor(message: string, options: StrategyRunErrorOptions) {
    super(message, { ...options, runId: options.result.runId });
    this.result = options.result;
  }
}

/**
 * The strategy decided it failed (an `error` decision, e.g. every branch failed) or one of its
 * calls threw. `result.thoughts` shows what the branches said.
 *
 * @example
 * ```ts
 * try { await runStrategy(opts); } catch (e) { if (e instanceof StrategyFailedError) console.log(e.result.thoughts); }
 * ```
 */
export class StrategyFailedError extends StrategyRunError {
  readonly code = 'strategy_failed' as const;
  readonly blame = 'model' as const;
}

/**
 * The strategy made `maxRounds` decisions without finishing. Raise `maxRounds`, or lower the
 * strategy's own depth, steps or revisions.
 *
 * @example
 * ```ts
 * await runStrategy({ ...opts, maxRounds: 20 });
 * ```
 */
export class StrategyRoundsExceededError extends StrategyRunError {
  readonly code = 'strategy_max_rounds' as const;
  readonly blame = 'user' as const;
}

/**
 * The strategy ran past `timeoutMs`; its branches were stopped. Raise `timeoutMs` or lower the
 * number of branches.
 *
 * @example
 * ```ts
 * await runStrategy({ ...opts, timeoutMs: 30 * 60_000 });
 * ```
 */
export class StrategyTimeoutError extends StrategyRunError {
  readonly code = 'strategy_timeout' as const;
  readonly blame = 'runtime' as const;
}

/**
 * The caller cancelled the run (`run.cancel()` or the `signal`); every branch was stopped.
 *
 * @example
 * ```ts
 * const run = startStrategy(opts); run.cancel(); await run.result; // rejects with StrategyCancelledError
 * ```
 */
export class StrategyCancelledError extends StrategyRunError {
  readonly code = 'strategy_cancelled' as const;
  readonly blame = 'user' as const;
}

/**
 * A strategy returned something that is not a decision (a missing `kind`, a thought without an
 * id, two branches with one id…). Fix the strategy's `step` or `aggregate`.
 *
 * @example
 * ```ts
 * throw new InvalidDecisionError('tree.step returned no decision: return { kind, …, state }.');
 * ```
 */
export class InvalidDecisionError extends ActorloopError {
  readonly code = 'invalid_decision' as const;
  readonly blame = 'user' as const;
}
