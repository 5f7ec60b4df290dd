import { describe, expect, it } from 'vitest';
import { runStrategy, strategies } from '../../src/strategies/index.ts';
import type { Thought } from '../../src/core/strategy.ts';
import { answering, judge } from './support.ts';

const scores: Record<string, number> = { g0: 0.2, g1: 0.9, g2: 0.6 };

describe('strategies.graph', () => {
  it('merges the top thoughts of different branches into one node and answers from it', async () => {
    const merged: Thought[][] = [];
    const result = await runStrategy({
      strategy: strategies.graph({
        breadth: 3,
        mergeTop: 2,
        scorer: (t) => scores[t.id] ?? 0,
        merge: (thoughts) => {
          merged.push([...thoughts]);
          return thoughts.map((t) => t.content).join(' + ');
        },
      }),
      task: 'design',
      subAgent: answering((b) => `idea ${b.id}`),
    });
    expect(merged).toHaveLength(1);
    expect(merged[0]?.map((t) => t.id)).toEqual(['g1', 'g2']);
    expect(result.text).toBe('idea g1 + idea g2');
    const node = result.thoughts.find((t) => t.id === 'merge-1');
    expect(node).toMatchObject({ content: 'idea g1 + idea g2', parentId: 'g1', metadata: { mergedFrom: ['g1', 'g2'] } });
    const decisions = result.events.flatMap((e) => (e.event.type === 'strategy.decided' ? [[e.event.decision, e.event.detail]] : []));
    expect(decisions).toEqual([
      ['branch', 'expansion 1: 3 branches'],
      ['continue', 'merged g1 (0.90) + g2 (0.60) into merge-1'],
      ['done', 'answer from merged node merge-1 (of g1, g2): idea g1 + idea g2'],
    ]);
  });

  it('merges with the model by default', async () => {
    const result = await runStrategy({
      strategy: strategies.graph({ breadth: 2, mergeTop: 2, scorer: () => 1 }),
      task: 'design',
      model: judge((prompt) => (prompt.includes('Combine the strengths') && prompt.includes('idea g0') && prompt.includes('idea g1') ? 'both ideas' : '?')),
      subAgent: answering((b) => `idea ${b.id}`),
    });
    expect(result.text).toBe('both ideas');
  });

  it('expands the merged node in a further round, keeping it when its rewrites score lower', async () => {
    const parents: (string | undefined)[] = [];
    const result = await runStrategy({
      strategy: strategies.graph({
        breadth: 2,
        mergeTop: 2,
        rounds: 2,
        scorer: (t) => (t.content.startsWith('better') ? 1 : 0.5),
        merge: (thoughts) => `merged(${thoughts.map((t) => t.id).join(',')})`,
      }),
      task: 'design',
      subAgent: answering((b) => {
        parents.push(b.parentId);
        return b.parentId === undefined ? `idea ${b.id}` : `better ${b.id}`;
      }),
    });
    expect(parents).toEqual([undefined, undefined, 'merge-1', 'merge-1']);
    expect(result.text).toBe('merged(merge-1.0,merge-1.1)');
    expect(result.iterations).toBe(5);
  });
});
