import { adaptive } from './builtins/adaptive.ts';
import { chain } from './builtins/chain.ts';
import { graph } from './builtins/graph.ts';
import { refine } from './builtins/refine.ts';
import { tree } from './builtins/tree.ts';
import { vote } from './builtins/vote.ts';

/** Each call returns a strategy configured with its options. @example `strategies.tree({ breadth: 3, depth: 2 })` */
export const strategies = { chain, tree, graph, vote, refine, adaptive } as const;

export { runStrategy, startStrategy } from './runStrategy.ts';
export type { RunStrategyOptions, StrategyRun } from './runStrategy.ts';
export type { StrategyResult } from './result.ts';
export type { BranchInfo, SubAgentSource } from './subAgent.ts';
export { StrategyRunError } from './errors.ts';
export { STRATEGY_DEFAULTS } from './defaults.ts';
export { normalizeAnswer } from './builtins/shared.ts';
export type { Scorer } from './builtins/shared.ts';
export type { ChainOptions, ChainState } from './builtins/chain.ts';
export type { TreeOptions, TreeState } from './builtins/tree.ts';
export type { GraphOptions, GraphState, Merger } from './builtins/graph.ts';
export type { VoteOptions, VoteState } from './builtins/vote.ts';
export type { Critic, RefineOptions, RefineState } from './builtins/refine.ts';
export type { AdaptiveOptions, AdaptiveState } from './builtins/adaptive.ts';
export type { Branch, ConfiguredStrategy, ReasoningStrategy, StrategyContext, StrategyDecision, StrategyDecisionKind, Thought } from '../core/strategy.ts';
export type { StrategyEndReason } from '../../machines/strategy.types.ts';
