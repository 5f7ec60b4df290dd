/**
 * The reasoning-strategy contract. A strategy owns its private state and decides, step by step,
 * whether to add a thought, fan out into branches (run as sub-agent actors by the runner),
 * revise with feedback, finish, or fail. No strategy means the plain ReAct loop, unchanged.
 */

/**
 * One unit of reasoning. `score` is absent until something scored it. A failed branch yields a
 * thought with `metadata.error`.
 *
 * @example
 * ```ts
 * const thought: Thought = { id: 't0.1', content: 'Factor 391 = 17 × 23', parentId: 't0', score: 0.8 };
 * ```
 */
export interface Thought {
  readonly id: string;
  readonly content: string;
  readonly parentId?: string;
  readonly score?: number;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/**
 * A branch to explore: the runner turns it into a sub-agent task (`prompt` is the task).
 *
 * @example
 * ```ts
 * const branch: Branch = { id: 't0.1', prompt: 'Try factoring 391.', parentId: 't0' };
 * ```
 */
export interface Branch {
  readonly id: string;
  readonly prompt: string;
  readonly parentId?: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/**
 * One decision of a strategy, with its next private state. `detail` (optional, short) says why;
 * the runner puts it in the decision's `strategy.decided` event instead of its own summary.
 *
 * @example
 * ```ts
 * return { kind: 'branch', branches: [{ id: 'b0', prompt: task }], state, detail: 'one sample' };
 * ```
 */
export type StrategyDecision<TState> =
  | { readonly kind: 'continue'; readonly thought: Thought; readonly state: TState; readonly detail?: string }
  | { readonly kind: 'branch'; readonly branches: readonly Branch[]; readonly state: TState; readonly detail?: string }
  | { readonly kind: 'revise'; readonly feedback: string; readonly state: TState; readonly detail?: string }
  | { readonly kind: 'done'; readonly answer: string; readonly state: TState; readonly detail?: string }
  | { readonly kind: 'error'; readonly reason: string; readonly state: TState; readonly detail?: string };

/** The kinds of decision. @example `const kind: StrategyDecisionKind = 'revise';` */
export type StrategyDecisionKind = StrategyDecision<unknown>['kind'];

/**
 * Read-only context a strategy gets: the task, and a way to ask the model directly. `signal`
 * aborts when the run is cancelled.
 *
 * @example
 * ```ts
 * const rating = await context.complete(`Rate 0–10: ${thought.content}`, { temperature: 0 });
 * ```
 */
export interface StrategyContext {
  readonly task: string;
  readonly runId: string;
  readonly signal: AbortSignal;
  /** One model completion (no tools) for scoring, critiquing or sampling. */
  complete(prompt: string, options?: { readonly system?: string; readonly temperature?: number }): Promise<string>;
}

/**
 * `(options) => rounds`, checked bivariantly like a method, so a `ReasoningStrategy<TreeOptions>`
 * still fits where a `ReasoningStrategy` (of unknown options) is expected.
 */
type RoundsOf<TOptions> = { bivarianceHack(options: TOptions): number }['bivarianceHack'];

/**
 * A reasoning strategy. The runner calls `init`, then `step` until a decision
 * says otherwise; after a `branch` it runs the branches as sub-agents and calls `aggregate`
 * with their thoughts. State must be JSON-safe for a run to persist.
 *
 * @example
 * ```ts
 * const once: ReasoningStrategy<void, null> = {
 *   name: 'once',
 *   init: () => null,
 *   step: (state, ctx) => ({ kind: 'branch', branches: [{ id: 'only', prompt: ctx.task }], state }),
 *   aggregate: ([t], state) => (t ? { kind: 'done', answer: t.content, state } : { kind: 'error', reason: 'no thought', state }),
 * };
 * ```
 */
export interface ReasoningStrategy<TOptions = unknown, TState = unknown> {
  /** Stable name, used in events and the inspector. */
  readonly name: string;
  /**
   * Decisions this strategy needs at most (e.g. depth + 1 for a tree), or how to compute that from
   * its options. The runner uses it as its max-rounds guard when the caller sets none. Optional.
   */
  readonly maxRounds?: number | RoundsOf<TOptions>;
  init(options: TOptions, context: StrategyContext): TState | Promise<TState>;
  step(state: TState, context: StrategyContext): StrategyDecision<TState> | Promise<StrategyDecision<TState>>;
  /** Called by the runner with the thoughts its branches produced (failed branches as error thoughts). */
  aggregate(thoughts: readonly Thought[], state: TState, context: StrategyContext): StrategyDecision<TState> | Promise<StrategyDecision<TState>>;
}

/**
 * A strategy bundled with the options it runs with: what `strategies.tree({ … })` returns, so
 * one value configures an agent or `runStrategy`. The runner passes `options` to `init`.
 *
 * @example
 * ```ts
 * const tot: ConfiguredStrategy<TreeOptions, TreeState> = strategies.tree({ breadth: 3, depth: 2 });
 * await runStrategy({ strategy: tot, task, subAgent, model });
 * ```
 */
export interface ConfiguredStrategy<TOptions = unknown, TState = unknown> extends ReasoningStrategy<TOptions, TState> {
  readonly options: TOptions;
}
