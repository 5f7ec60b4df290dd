import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.ts';
import { byScore, firstNumber, mergeOptions, normalizeAnswer } from '../../src/strategies/builtins/shared.ts';
import { runStrategy, strategies } from '../../src/strategies/index.ts';
import { answering } from './support.ts';

describe('strategy helpers', () => {
  it('normalises answers so that phrasing does not split a vote', () => {
    expect(normalizeAnswer('The answer is **42**.')).toBe('42');
    expect(normalizeAnswer('  Final answer: "Paris"! ')).toBe('paris');
    expect(normalizeAnswer('42')).toBe('42');
    expect(normalizeAnswer('Forty two')).not.toBe(normalizeAnswer('42'));
  });

  it('reads the first number of a rating', () => {
    expect(firstNumber('Score: 7/10')).toBe(7);
    expect(firstNumber('about 8.5')).toBe(8.5);
    expect(firstNumber('none')).toBeUndefined();
  });

  it('sorts best first and keeps ties in their order', () => {
    const items = [{ id: 'a', score: 1 }, { id: 'b', score: 2 }, { id: 'c', score: 1 }];
    expect(byScore(items).map((i) => i.id)).toEqual(['b', 'a', 'c']);
  });

  it('refuses function options given after creation, which the state could not carry', () => {
    const scorer = () => 1;
    expect(() => mergeOptions('tree', { depth: 2 } as { depth?: number; scorer?: () => number }, { scorer }, ['scorer'])).toThrow(ConfigurationError);
    expect(mergeOptions('tree', { depth: 2, scorer } as { depth?: number; scorer?: () => number }, { depth: 3, scorer }, ['scorer'])).toEqual({ depth: 3, scorer });
  });

  it('rejects nonsense options when a strategy is created', () => {
    expect(() => strategies.tree({ depth: 0 })).toThrow(/depth/);
    expect(() => strategies.vote({ samples: 1.5 })).toThrow(/samples/);
  });

  it('lets runStrategy options override data options, and derives the round bound from them', async () => {
    const result = await runStrategy({
      strategy: strategies.vote({ samples: 2 }),
      options: { samples: 4 },
      task: 'q',
      subAgent: answering(() => 'a'),
    });
    expect(result.events.filter((e) => e.event.type === 'branch.started')).toHaveLength(4);
    const deep = await runStrategy({
      strategy: strategies.tree({ breadth: 1, depth: 1, scorer: () => 1 }),
      options: { depth: 12 },
      task: 'q',
      subAgent: answering((b) => b.id),
    });
    expect(deep.iterations).toBe(13);
  });
});
