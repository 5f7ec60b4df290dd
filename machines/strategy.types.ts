/**
 * Types shared by the strategy runner machine (`machines/strategy.machine.ts`) and the runtime
 * that provides its actors. Types only, so the machine stays free of I/O and runtime imports.
 */
import type { CodesOf } from '../src/core/errorCodes.ts';
import type { LoopEventOf, TerminationReason } from '../src/core/loopEvent.ts';
import type { Usage } from '../src/core/provider.ts';
import type { Branch, StrategyDecision, StrategyDecisionKind, Thought } from '../src/core/strategy.ts';

/**
 * Input of the strategy runner machine; the runtime resolves every default before it starts.
 *
 * @example
 * ```ts
 * const input: StrategyMachineInput = { runId: 'run-1', strategy: 'vote', task: '6 * 7?', model: 'gpt-4o-mini', maxRounds: 10, concurrency: 4, timeoutMs: 900_000 };
 * ```
 */
export interface StrategyMachineInput {
  readonly runId: string;
  /** The strategy's stable name, for events and the inspector. */
  readonly strategy: string;
  readonly task: string;
  /** The model name reported in `run.started` (informational). */
  readonly model: string;
  /** Decisions allowed before the run fails with `max_rounds`: a strategy never loops forever. */
  readonly maxRounds: number;
  /** Branches (sub-agents) running at once; the rest wait in order. */
  readonly concurrency: number;
  /** Wall-clock budget of the whole strategy run, in ms. */
  readonly timeoutMs: number;
}

/** Input of the `init` actor. @example `{ runId: 'run-1', task: '6 * 7?' }` */
export interface StrategyInitInput {
  readonly runId: string;
  readonly task: string;
}

/** Output of the `init` actor: the strategy's first private state and the tokens `init` used. @example `{ state: {}, usage: ZERO_USAGE }` */
export interface StrategyInitOutput {
  readonly state: unknown;
  readonly usage: Usage;
  /** USD of the model calls made, when the model prices them. */
  readonly costUsd?: number;
}

/**
 * Input of the `step` and `aggregate` actors. `round` is the number the coming decision gets;
 * `thoughts` (aggregate only) are the branch results, in branch order.
 *
 * @example
 * ```ts
 * const input: StrategyDecideInput = { runId: 'run-1', task: '6 * 7?', round: 2, state, thoughts };
 * ```
 */
export interface StrategyDecideInput {
  readonly runId: string;
  readonly task: string;
  readonly round: number;
  readonly state: unknown;
  readonly thoughts?: readonly Thought[];
}

/** Output of `step` and `aggregate`: the decision and the tokens used deciding it. @example `{ decision: { kind: 'done', answer: '42', state }, usage }` */
export interface StrategyDecideOutput {
  readonly decision: StrategyDecision<unknown>;
  readonly usage: Usage;
  /** USD of the model calls made deciding, when the model prices them. */
  readonly costUsd?: number;
}

/** Input of one `branch` actor (one sub-agent run). @example `{ runId: 'run-1', round: 1, index: 0, branch: { id: 'b0', prompt: '6 * 7?' } }` */
export interface StrategyBranchInput {
  readonly runId: string;
  readonly round: number;
  /** Position of the branch in its fan-out. */
  readonly index: number;
  readonly branch: Branch;
}

/**
 * Output of a `branch` actor: the thought it produced (an error thought, with
 * `metadata.error`, when the sub-agent failed), its usage and its wall time.
 *
 * @example
 * ```ts
 * const out: StrategyBranchOutput = { thought: { id: 'b0', content: '42' }, usage, durationMs: 120 };
 * ```
 */
export interface StrategyBranchOutput {
  readonly thought: Thought;
  readonly usage: Usage;
  /** USD of the sub-agent's run. */
  readonly costUsd?: number;
  readonly durationMs: number;
  /** The sub-agent run that produced the thought, when there was one: its journal is the branch's trace. */
  readonly runId?: string;
}

/** A branch actor in flight: its child id and its place in the fan-out. @example `{ actorId: 'branch:1:0:b0', index: 0 }` */
export interface InFlightBranch {
  readonly actorId: string;
  readonly index: number;
}

/**
 * How a strategy run ended: `done` (an answer), `error` (the strategy decided it failed),
 * `exception` (init/step/aggregate threw or returned nonsense), `max_rounds`, `timeout`, `cancelled`.
 *
 * @example
 * ```ts
 * const reason: StrategyEndReason = 'max_rounds';
 * ```
 */
export type StrategyEndReason = 'done' | 'error' | 'exception' | 'max_rounds' | 'timeout' | 'cancelled';

/**
 * The runner's end reasons in the terms every run uses (its `run.terminated` entry, its result):
 * an exception and an error decision are both `error`, told apart by the result's `cause`.
 *
 * @example
 * ```ts
 * STRATEGY_TERMINATION.max_rounds; // 'max_iterations'
 * ```
 */
export const STRATEGY_TERMINATION: Readonly<Record<StrategyEndReason, TerminationReason>> = {
  done: 'final_answer',
  error: 'error',
  exception: 'error',
  max_rounds: 'max_iterations',
  timeout: 'timeout',
  cancelled: 'cancelled',
};

/** The code of the error a strategy run that did not finish ends with (its journal's and its result's). */
export const STRATEGY_ERROR_CODE: Readonly<Record<Exclude<StrategyEndReason, 'done'>, CodesOf<'StrategyRunError'>>> = {
  error: 'strategy_failed',
  exception: 'strategy_failed',
  max_rounds: 'strategy_max_rounds',
  timeout: 'strategy_timeout',
  cancelled: 'strategy_cancelled',
};

/** Why the run ended, once it has. @example `{ reason: 'error', message: 'every branch failed' }` */
export interface StrategyTermination {
  readonly reason: StrategyEndReason;
  readonly message?: string;
  /** The thrown value behind an `exception`, kept for the runtime to attach as `cause`. */
  readonly error?: unknown;
}

/** The runner's context: its input, and what the run has done so far. @example `actor.getSnapshot().context.round` */
export interface StrategyMachineContext extends StrategyMachineInput {
  /** The strategy's private state (JSON-able for persistence); the runner never reads it. */
  readonly state: unknown;
  /** Decisions made so far. */
  readonly round: number;
  /** Every thought so far: `continue` thoughts and branch results, in order. */
  readonly thoughts: readonly Thought[];
  /** The last decision, until the next one replaces it. */
  readonly decision: StrategyDecision<unknown> | null;
  /** The current fan-out. */
  readonly branches: readonly Branch[];
  /** Aligned with `branches`: each branch's thought once it has settled. */
  readonly results: readonly (Thought | null)[];
  /** Index of the next branch to start. */
  readonly nextBranch: number;
  readonly inFlight: readonly InFlightBranch[];
  /** The most branches that were in flight at once (for tests and tuning). */
  readonly peakInFlight: number;
  readonly usage: Usage;
  /** USD summed over the same calls as `usage`. */
  readonly costUsd: number;
  readonly answer: string | null;
  readonly termination: StrategyTermination | null;
}

/**
 * Events the runner accepts: `strategy.cancel` from the caller, `strategy.expire` when the caller's
 * clock says the budget is spent (a run replayed in steps counts from its start, not the step's),
 * and the done/error events of its branch children (XState sends these to the parent).
 *
 * @example
 * ```ts
 * actor.send({ type: 'strategy.cancel', reason: 'user pressed stop' });
 * ```
 */
export type StrategyMachineEvent =
  | { readonly type: 'strategy.cancel'; readonly reason?: string }
  | { readonly type: 'strategy.expire' }
  | { readonly type: `xstate.done.actor.${string}`; readonly output: StrategyBranchOutput; readonly actorId: string }
  | { readonly type: `xstate.error.actor.${string}`; readonly error: unknown; readonly actorId: string };

/** What the runner emits (the runtime journals each as a `JournalEntry`). @example `actor.on('strategy.decided', (e) => e.detail)` */
export type StrategyEmitted =
  | LoopEventOf<'run.started'>
  | LoopEventOf<'strategy.decided'>
  | LoopEventOf<'branch.started'>
  | LoopEventOf<'branch.finished'>
  | LoopEventOf<'run.terminated'>;

/**
 * The runner's output, however it ended.
 *
 * @example
 * ```ts
 * const out: StrategyMachineOutput = await toPromise(actor);
 * if (out.reason === 'done') console.log(out.answer);
 * ```
 */
export interface StrategyMachineOutput {
  readonly reason: StrategyEndReason;
  readonly answer: string | null;
  readonly thoughts: readonly Thought[];
  readonly rounds: number;
  readonly usage: Usage;
  readonly costUsd: number;
  readonly peakInFlight: number;
  readonly message?: string;
  readonly error?: unknown;
}

export type { StrategyDecisionKind };
