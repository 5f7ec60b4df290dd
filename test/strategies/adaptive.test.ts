import { describe, expect, it } from 'vitest';
import { runStrategy, strategies } from '../../src/strategies/index.ts';
import { answering, judge } from './support.ts';

function firstDetail(result: { runId: string; events: readonly { runId: string; event: { type: string; detail?: string } }[] }) {
  return result.events.find((e) => e.runId === result.runId && e.event.type === 'strategy.decided')?.event.detail;
}

const routes = {
  easy: strategies.vote({ samples: 1 }),
  medium: strategies.vote({ samples: 3 }),
  hard: strategies.tree({ breadth: 2, depth: 1, beamWidth: 1, scorer: () => 1 }),
};

describe('strategies.adaptive', () => {
  it('picks the easy strategy for a low difficulty and says why in its first decision', async () => {
    const result = await runStrategy({
      strategy: strategies.adaptive({ difficulty: () => 1, routes }),
      task: '2 + 2?',
      subAgent: answering(() => '4'),
    });
    expect(result.text).toBe('4');
    expect(result.events.filter((e) => e.event.type === 'branch.started')).toHaveLength(1);
    expect(firstDetail(result)).toBe('chose vote (easy): difficulty 1/5 from the difficulty function, < 3; 1 independent samples');
  });

  it('picks the hard strategy from a model-rated difficulty', async () => {
    const result = await runStrategy({
      strategy: strategies.adaptive({ routes }),
      task: 'Prove it',
      model: judge((prompt) => (prompt.startsWith('Rate the difficulty') ? '4' : '0')),
      subAgent: answering((b) => `proof ${b.id}`),
    });
    expect(result.text).toBe('proof t0');
    expect(firstDetail(result)).toBe('chose tree (hard): difficulty 4/5 rated by the model, ≥ 4; depth 1: 2 branches from the task');
  });

  it('picks the medium strategy between the thresholds, and when the rating is unreadable', async () => {
    const medium = await runStrategy({ strategy: strategies.adaptive({ difficulty: () => 3, routes }), task: 'q', subAgent: answering(() => 'a') });
    expect(firstDetail(medium)).toMatch(/^chose vote \(medium\): difficulty 3\/5 from the difficulty function, ≥ 3 and < 4/);
    const unreadable = await runStrategy({
      strategy: strategies.adaptive({ routes }),
      task: 'q',
      model: judge(() => 'hard to say'),
      subAgent: answering(() => 'a'),
    });
    expect(firstDetail(unreadable)).toMatch(/^chose vote \(medium\): the difficulty rating was unreadable/);
    expect(unreadable.events.filter((e) => e.event.type === 'branch.started')).toHaveLength(3);
  });

  it('honours custom thresholds and defaults to chain for easy tasks', async () => {
    const result = await runStrategy({
      strategy: strategies.adaptive({ difficulty: () => 2, mediumFrom: 4, hardFrom: 5 }),
      task: 'q',
      model: judge((prompt) => (prompt.includes('final answer') ? 'done' : 'thinking')),
      subAgent: answering(() => 'unused'),
    });
    expect(firstDetail(result)).toMatch(/^chose chain \(easy\): difficulty 2\/5/);
    expect(result.text).toBe('done');
  });
});
