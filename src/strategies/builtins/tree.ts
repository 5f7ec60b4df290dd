import { STRATEGY_DEFAULTS } from '../defaults.ts';
import type { Branch, ConfiguredStrategy, StrategyContext, StrategyDecision, Thought } from '../../core/strategy.ts';
import { byScore, clip, count, lineage, mergeOptions, scoreAll, usable, type Scorer, type ScoredThought } from './shared.ts';
import { defined } from '../../core/defined.ts';

export interface TreeOptions {
  readonly breadth?: number;
  /** Levels below the task. */
  readonly depth?: number;
  readonly beamWidth?: number;
  readonly scorer?: Scorer | 'model';
}

interface TreeNode {
  readonly id: string;
  readonly content: string;
  readonly parentId?: string;
  readonly score: number;
}

export interface TreeState {
  readonly breadth: number;
  readonly depth: number;
  readonly beamWidth: number;
  /** Levels scored so far. */
  readonly level: number;
  /** Best first. */
  readonly beam: readonly TreeNode[];
  readonly nodes: Readonly<Record<string, TreeNode>>;
}

function expandPrompt(task: string, path: readonly string[], level: number, depth: number, index: number): string {
  const so = path.length === 0 ? '' : `Reasoning so far:\n${path.map((p, i) => `${i + 1}. ${p}`).join('\n')}\n\n`;
  const ask =
    level === depth
      ? 'Continue from the reasoning so far and give a complete answer to the task.'
      : 'Propose the next step toward solving the task: one distinct idea, stated concisely (an answer if you already have one).';
  return `Task:\n${task}\n\n${so}${ask}${index > 0 ? ` (Alternative ${index + 1}: take a different direction than the obvious one.)` : ''}`;
}

function expand(task: string, state: TreeState, parents: readonly (TreeNode | undefined)[]): Branch[] {
  const level = state.level + 1;
  return parents.flatMap((parent, p) =>
    Array.from({ length: state.breadth }, (_, i): Branch => ({
      id: parent === undefined ? `t${i}` : `${parent.id}.${i}`,
      prompt: expandPrompt(task, lineage(state.nodes, parent?.id), level, state.depth, i),
      ...(parent === undefined ? {} : { parentId: parent.id }),
      metadata: { level, parent: p },
    })),
  );
}

/** Only the beam and its ancestors, whose contents build the prompts: memory stays bounded by beamWidth × depth. */
function keep(nodes: Readonly<Record<string, TreeNode>>, beam: readonly TreeNode[]): Record<string, TreeNode> {
  const kept: Record<string, TreeNode> = {};
  for (const node of beam) {
    for (let at: TreeNode | undefined = node; at !== undefined && !Object.hasOwn(kept, at.id); ) {
      kept[at.id] = at;
      at = at.parentId !== undefined && Object.hasOwn(nodes, at.parentId) ? nodes[at.parentId] : undefined;
    }
  }
  return kept;
}

function label(nodes: readonly ScoredThought[]): string {
  return nodes.map((n) => `${n.id} (${n.score.toFixed(2)})`).join(', ');
}

export function tree(configured: TreeOptions = {}): ConfiguredStrategy<TreeOptions, TreeState> {
  const scorer = configured.scorer ?? 'model';
  const depthOf = (o: TreeOptions | undefined) => count('tree', 'depth', (o ?? configured).depth, STRATEGY_DEFAULTS.tree.depth);
  depthOf(configured);
  return {
    name: 'tree',
    options: configured,
    // One step, then one aggregate per level (the last one done).
    maxRounds: (o) => depthOf(o) + 1,
    init(given) {
      const o = mergeOptions('tree', configured, given, ['scorer']);
      return {
        breadth: count('tree', 'breadth', o.breadth, STRATEGY_DEFAULTS.tree.breadth),
        depth: depthOf(o),
        beamWidth: count('tree', 'beamWidth', o.beamWidth, STRATEGY_DEFAULTS.tree.beamWidth),
        level: 0,
        beam: [],
        nodes: {},
      };
    },
    step(state, context: StrategyContext) {
      return { kind: 'branch', branches: expand(context.task, state, [undefined]), state, detail: `depth 1: ${state.breadth} branches from the task` };
    },
    async aggregate(thoughts: readonly Thought[], state, context): Promise<StrategyDecision<TreeState>> {
      const level = state.level + 1;
      const ok = thoughts.filter(usable);
      const best = state.beam[0];
      if (ok.length === 0) {
        if (best === undefined) return { kind: 'error', reason: `every branch at depth ${level} failed`, state };
        return { kind: 'done', answer: best.content, state, detail: `every branch at depth ${level} failed; best node ${best.id} of depth ${state.level}` };
      }
      const ranked = byScore(await scoreAll(ok, scorer, context));
      const beamThoughts = ranked.slice(0, state.beamWidth);
      const beam = beamThoughts.map(
        (t): TreeNode => ({ id: t.id, content: t.content, score: t.score, ...defined({ parentId: t.parentId }) }),
      );
      const all: Record<string, TreeNode> = { ...state.nodes };
      for (const node of beam) all[node.id] = node;
      const next: TreeState = { ...state, level, beam, nodes: keep(all, beam) };
      const top = beam[0] as TreeNode;
      if (level >= state.depth) {
        return { kind: 'done', answer: top.content, state: next, detail: `depth ${level} reached; best leaf ${top.id} (${top.score.toFixed(2)}): ${clip(top.content)}` };
      }
      const branches = expand(context.task, next, beam);
      return {
        kind: 'branch',
        branches,
        state: next,
        detail: `depth ${level}: kept ${label(beamThoughts)} of ${thoughts.length}; depth ${level + 1}: ${branches.length} branches`,
      };
    },
  };
}
