import { describe, expect, it } from 'vitest';
import { runStrategy, strategies } from '../../src/strategies/index.ts';
import type { Branch } from '../../src/core/strategy.ts';
import { answering, judge } from './support.ts';

/** Scores: the number after "v" in the content (`"t1 v7"` → 7). */
const byValue = (content: string) => Number(/v(\d+)/.exec(content)?.[1] ?? 0);
const values: Record<string, number> = { t0: 3, t1: 9, t2: 6, 't1.0': 2, 't1.1': 8, 't1.2': 1, 't2.0': 7, 't2.1': 4, 't2.2': 5, 't0.0': 99 };

describe('strategies.tree', () => {
  it('expands only the beam at each level and stops at the given depth with the best leaf', async () => {
    const branches: Branch[] = [];
    const result = await runStrategy({
      strategy: strategies.tree({ breadth: 3, depth: 2, beamWidth: 2, scorer: (t) => byValue(t.content) }),
      task: 'solve',
      subAgent: answering((b) => {
        branches.push(b);
        return `${b.id} v${values[b.id] ?? 0}`;
      }),
    });
    // Level 1: t0, t1, t2 → beam t1 (9), t2 (6); t0 is pruned and never expanded.
    expect(branches.map((b) => b.id).sort()).toEqual(['t0', 't1', 't1.0', 't1.1', 't1.2', 't2', 't2.0', 't2.1', 't2.2']);
    expect(new Set(branches.filter((b) => b.parentId !== undefined).map((b) => b.parentId))).toEqual(new Set(['t1', 't2']));
    // Level 2 beam: t1.1 (8), t2.0 (7) → best leaf t1.1. No third level.
    expect(result.text).toBe('t1.1 v8');
    expect(result.iterations).toBe(3);
    const details = result.events.flatMap((e) => (e.event.type === 'strategy.decided' && e.runId === result.runId ? [e.event.detail] : []));
    expect(details).toEqual([
      'depth 1: 3 branches from the task',
      'depth 1: kept t1 (9.00), t2 (6.00) of 3; depth 2: 6 branches',
      'depth 2 reached; best leaf t1.1 (8.00): t1.1 v8',
    ]);
  });

  it('gives deeper branches the reasoning of their ancestors', async () => {
    const prompts = new Map<string, string>();
    await runStrategy({
      strategy: strategies.tree({ breadth: 2, depth: 3, beamWidth: 1, scorer: (t) => byValue(t.content) }),
      task: 'solve',
      subAgent: answering((b) => {
        prompts.set(b.id, b.prompt);
        return `${b.id} v${b.id.endsWith('1') ? 5 : 1}`;
      }),
    });
    expect([...prompts.keys()].sort()).toEqual(['t0', 't1', 't1.0', 't1.1', 't1.1.0', 't1.1.1']);
    expect(prompts.get('t1.1.0')).toContain('1. t1 v5\n2. t1.1 v5');
    expect(prompts.get('t1.1.0')).toContain('give a complete answer');
  });

  it('scores with the model when no scorer is given', async () => {
    const result = await runStrategy({
      strategy: strategies.tree({ breadth: 2, depth: 1, beamWidth: 1 }),
      task: 'solve',
      model: judge((prompt) => (prompt.includes('Candidate:\nsecond') ? '8' : '3')),
      subAgent: answering((b) => (b.id === 't0' ? 'first' : 'second')),
    });
    expect(result.text).toBe('second');
  });

  it('answers from the previous level when every branch of a level fails', async () => {
    const result = await runStrategy({
      strategy: strategies.tree({ breadth: 2, depth: 2, beamWidth: 1, scorer: (t) => byValue(t.content) }),
      task: 'solve',
      subAgent: answering((b) => (b.parentId === undefined ? `${b.id} v${b.id === 't1' ? 2 : 1}` : { error: new Error('down') })),
    });
    expect(result.text).toBe('t1 v2');
  });
});
