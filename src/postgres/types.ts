/** Kept apart so the engine and the strategy step share these without a cycle. */
import type { InferenceProvider } from '../core/provider.ts';
import type { ReasoningStrategy } from '../core/strategy.ts';
import type { Agent } from '../agent/types.ts';
import type { StrategyResult } from '../strategies/result.ts';

export interface DurableStrategyDefinition<TOptions = unknown, TState = unknown> {
  readonly strategy: ReasoningStrategy<TOptions, TState>;
  readonly options?: TOptions;
  /** An agent created with the same runtime: each branch is one of its durable runs. */
  readonly subAgent: Agent;
  /** Default the sub-agent's. */
  readonly model?: InferenceProvider;
  readonly modelName?: string;
  readonly concurrency?: number;
  readonly maxRounds?: number;
  /** Wall-clock budget of each step's replay, in ms. */
  readonly timeoutMs?: number;
}

export interface DurableStrategy {
  readonly id: string;
  /** Rejects with a typed `StrategyRunError` when the run fails. */
  run(task: string, options?: { readonly runId?: string }): Promise<StrategyResult>;
}

