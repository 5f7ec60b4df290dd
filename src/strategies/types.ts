/**
 * The reasoning-strategy contract. A strategy owns its private state and decides, step by step,
 * whether to add a thought, fan out into branches (run as sub-agent actors by the runner),
 * revise with feedback, finish, or fail. No strategy means the plain ReAct loop, unchanged.
 */

/** One unit of reasoning. `score` is absent until something scored it. */
export interface Thought {
  readonly id: string;
  readonly content: string;
  readonly parentId?: string;
  readonly score?: number;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** A branch to explore: the runner turns it into a sub-agent task. */
export interface Branch {
  readonly id: string;
  readonly prompt: string;
  readonly parentId?: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** One decision of a strategy, with its next private state. */
export type StrategyDecision<TState> =
  | { readonly kind: 'continue'; readonly thought: Thought; readonly state: TState }
  | { readonly kind: 'branch'; readonly branches: readonly Branch[]; readonly state: TState }
  | { readonly kind: 'revise'; readonly feedback: string; readonly state: TState }
  | { readonly kind: 'done'; readonly answer: string; readonly state: TState }
  | { readonly kind: 'error'; readonly reason: string; readonly state: TState };

/** Read-only context a strategy gets: the task, and a way to ask the model directly. */
export interface StrategyContext {
  readonly task: string;
  readonly runId: string;
  readonly signal: AbortSignal;
  /** One model completion (no tools) for scoring, critiquing or sampling. */
  complete(prompt: string, options?: { readonly system?: string; readonly temperature?: number }): Promise<string>;
}

export interface ReasoningStrategy<TOptions = unknown, TState = unknown> {
  /** Stable name, used in events and the inspector. */
  readonly name: string;
  init(options: TOptions, context: StrategyContext): TState | Promise<TState>;
  step(state: TState, context: StrategyContext): StrategyDecision<TState> | Promise<StrategyDecision<TState>>;
  /** Called by the runner with the thoughts its branches produced (failed branches as error thoughts). */
  aggregate(thoughts: readonly Thought[], state: TState, context: StrategyContext): StrategyDecision<TState> | Promise<StrategyDecision<TState>>;
}
