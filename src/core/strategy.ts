/** A strategy decides step by step: add a thought, fan out into branches (sub-agents), revise, finish or fail. */

/** A failed branch yields a thought with `metadata.error`; `score` is absent until something scored it. */
export interface Thought {
  readonly id: string;
  readonly content: string;
  readonly parentId?: string;
  readonly score?: number;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** The runner turns a branch into a sub-agent task (`prompt` is the task). */
export interface Branch {
  readonly id: string;
  readonly prompt: string;
  readonly parentId?: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** `detail` says why; the runner puts it in the `strategy.decided` event instead of its own summary. */
export type StrategyDecision<TState> =
  | { readonly kind: 'continue'; readonly thought: Thought; readonly state: TState; readonly detail?: string }
  | { readonly kind: 'branch'; readonly branches: readonly Branch[]; readonly state: TState; readonly detail?: string }
  | { readonly kind: 'revise'; readonly feedback: string; readonly state: TState; readonly detail?: string }
  | { readonly kind: 'done'; readonly answer: string; readonly state: TState; readonly detail?: string }
  | { readonly kind: 'error'; readonly reason: string; readonly state: TState; readonly detail?: string };

export type StrategyDecisionKind = StrategyDecision<unknown>['kind'];

/** `complete` asks the model directly (no tools), for scoring, critiquing or sampling. */
export interface StrategyContext {
  readonly task: string;
  readonly runId: string;
  readonly signal: AbortSignal;
  complete(prompt: string, options?: { readonly system?: string; readonly temperature?: number }): Promise<string>;
}

/** Bivariant like a method, so a `ReasoningStrategy<TreeOptions>` fits where a `ReasoningStrategy` is expected. */
type RoundsOf<TOptions> = { bivarianceHack(options: TOptions): number }['bivarianceHack'];

/** The runner calls `init`, then `step`; after a `branch` it runs the branches and calls `aggregate`. State must be JSON-safe to persist. */
export interface ReasoningStrategy<TOptions = unknown, TState = unknown> {
  readonly name: string;
  /** The runner's max-rounds guard when the caller sets none. */
  readonly maxRounds?: number | RoundsOf<TOptions>;
  init(options: TOptions, context: StrategyContext): TState | Promise<TState>;
  step(state: TState, context: StrategyContext): StrategyDecision<TState> | Promise<StrategyDecision<TState>>;
  /** Called by the runner with the thoughts its branches produced (failed branches as error thoughts). */
  aggregate(thoughts: readonly Thought[], state: TState, context: StrategyContext): StrategyDecision<TState> | Promise<StrategyDecision<TState>>;
}

/** A strategy with its options, as `strategies.tree({ … })` returns it; the runner passes `options` to `init`. */
export interface ConfiguredStrategy<TOptions = unknown, TState = unknown> extends ReasoningStrategy<TOptions, TState> {
  readonly options: TOptions;
}
