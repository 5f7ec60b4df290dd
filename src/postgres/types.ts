/** The public shapes of durable strategies (kept apart so the engine and the strategy step share them without a cycle). */
import type { InferenceProvider } from '../core/provider.ts';
import type { ReasoningStrategy } from '../core/strategy.ts';
import type { Agent } from '../agent/types.ts';
import type { StrategyResult } from '../strategies/result.ts';

export interface DurableStrategyDefinition<TOptions = unknown, TState = unknown> {
  /** A strategy, e.g. `strategies.vote({ samples: 3 })`. */
  readonly strategy: ReasoningStrategy<TOptions, TState>;
  readonly options?: TOptions;
  /** An agent created with the same runtime: each branch is one of its durable runs. */
  readonly subAgent: Agent;
  /** The model behind `context.complete`; default the sub-agent's. */
  readonly model?: InferenceProvider;
  readonly modelName?: string;
  readonly concurrency?: number;
  readonly maxRounds?: number;
  /** Wall-clock budget of each step's replay, in ms. */
  readonly timeoutMs?: number;
}

/** A strategy's durable runs. */
export interface DurableStrategy {
  readonly id: string;
  /** Queue a run and resolve with its result when a worker finishes it; rejects with a typed `StrategyRunError` otherwise. */
  run(task: string, options?: { readonly runId?: string }): Promise<StrategyResult>;
}

