// The merged node is a thought with several parents (`metadata.mergedFrom`); each further round expands and merges it again.
import { STRATEGY_DEFAULTS } from '../defaults.ts';
import type { Branch, ConfiguredStrategy, StrategyContext, StrategyDecision, Thought } from '../../core/strategy.ts';
import { byScore, clip, count, mergeOptions, scoreAll, usable, type Scorer, type ScoredThought } from './shared.ts';

export type Merger = (thoughts: readonly Thought[], context: StrategyContext) => string | Promise<string>;

export interface GraphOptions {
  readonly breadth?: number;
  readonly mergeTop?: number;
  /** Expand-and-merge rounds. */
  readonly rounds?: number;
  readonly scorer?: Scorer | 'model';
  readonly merge?: Merger;
}

interface MergedNode {
  readonly id: string;
  readonly content: string;
  readonly mergedFrom: readonly string[];
  readonly score: number;
}

export interface GraphState {
  readonly breadth: number;
  readonly mergeTop: number;
  readonly rounds: number;
  readonly merges: number;
  readonly merged: MergedNode | null;
}

async function modelMerge(thoughts: readonly Thought[], context: StrategyContext): Promise<string> {
  const list = thoughts.map((t, i) => `Candidate ${i + 1}:\n${t.content}`).join('\n\n');
  return context.complete(
    `Task:\n${context.task}\n\n${list}\n\nCombine the strengths of these candidates into one answer to the task: keep what is correct in each, resolve contradictions, drop what is wrong. Reply with the combined answer only.`,
  );
}

function branches(task: string, state: GraphState): Branch[] {
  const base = state.merged;
  return Array.from({ length: state.breadth }, (_, i): Branch => ({
    id: base === null ? `g${i}` : `${base.id}.${i}`,
    prompt:
      base === null
        ? `Task:\n${task}\n\nSolve the task.${i > 0 ? ` (Approach ${i + 1}: try a different angle than the obvious one.)` : ''}`
        : `Task:\n${task}\n\nA combined answer so far:\n${base.content}\n\nImprove on it: fix mistakes and fill gaps. Reply with the improved answer.`,
    ...(base === null ? {} : { parentId: base.id }),
    metadata: { expansion: state.merges + 1 },
  }));
}

const label = (nodes: readonly ScoredThought[]) => nodes.map((n) => `${n.id} (${n.score.toFixed(2)})`).join(' + ');

export function graph(configured: GraphOptions = {}): ConfiguredStrategy<GraphOptions, GraphState> {
  const scorer = configured.scorer ?? 'model';
  const merge = configured.merge ?? modelMerge;
  const roundsOf = (o: GraphOptions | undefined) => count('graph', 'rounds', (o ?? configured).rounds, STRATEGY_DEFAULTS.graph.rounds);
  roundsOf(configured);
  return {
    name: 'graph',
    options: configured,
    // Per round: a branch and a continue (the merged node); then done.
    maxRounds: (o) => 2 * roundsOf(o) + 1,
    init(given) {
      const o = mergeOptions('graph', configured, given, ['scorer', 'merge']);
      return {
        breadth: count('graph', 'breadth', o.breadth, STRATEGY_DEFAULTS.graph.breadth),
        mergeTop: count('graph', 'mergeTop', o.mergeTop, STRATEGY_DEFAULTS.graph.mergeTop),
        rounds: roundsOf(o),
        merges: 0,
        merged: null,
      };
    },
    step(state, context) {
      if (state.merged !== null && state.merges >= state.rounds) {
        const m = state.merged;
        return { kind: 'done', answer: m.content, state, detail: `answer from merged node ${m.id} (of ${m.mergedFrom.join(', ')}): ${clip(m.content)}` };
      }
      const fanOut = branches(context.task, state);
      return { kind: 'branch', branches: fanOut, state, detail: `expansion ${state.merges + 1}: ${fanOut.length} branches${state.merged === null ? '' : ` from ${state.merged.id}`}` };
    },
    async aggregate(thoughts, state, context): Promise<StrategyDecision<GraphState>> {
      const ok = thoughts.filter(usable);
      // The previous merged node competes with its improvements: a worse rewrite never replaces it.
      const candidates: Thought[] = state.merged === null ? ok : [{ id: state.merged.id, content: state.merged.content, score: state.merged.score }, ...ok];
      if (candidates.length === 0) return { kind: 'error', reason: 'every branch failed: nothing to merge', state };
      const top = byScore(await scoreAll(candidates, scorer, context)).slice(0, state.mergeTop);
      const content = top.length === 1 ? (top[0] as ScoredThought).content : await merge(top, context);
      const id = `merge-${state.merges + 1}`;
      const best = top[0] as ScoredThought;
      const node: MergedNode = { id, content, mergedFrom: top.map((t) => t.id), score: best.score };
      const thought: Thought = { id, content, parentId: best.id, metadata: { mergedFrom: node.mergedFrom, scores: top.map((t) => t.score) } };
      return {
        kind: 'continue',
        thought,
        state: { ...state, merges: state.merges + 1, merged: node },
        detail: top.length === 1 ? `one usable thought: ${best.id} becomes ${id}` : `merged ${label(top)} into ${id}`,
      };
    },
  };
}
