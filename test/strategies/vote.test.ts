import { describe, expect, it } from 'vitest';
import { runStrategy, strategies } from '../../src/strategies/index.ts';
import { answering, judge } from './support.ts';
import type { StrategyRunError } from '../../src/strategies/errors.ts';

const detailsOf = (events: readonly { event: { type: string; detail?: string } }[]) =>
  events.flatMap((e) => (e.event.type === 'strategy.decided' ? [e.event.detail] : []));

describe('strategies.vote', () => {
  it('returns the majority answer, comparing answers after normalisation', async () => {
    const replies = ['41', 'The answer is **42**.', '42', 'Answer: 42', '7'];
    const result = await runStrategy({
      strategy: strategies.vote({ samples: 5 }),
      task: 'What is 6 * 7?',
      subAgent: answering((_b, info) => replies[info.index] ?? ''),
    });
    expect(result.text).toBe('The answer is **42**.');
    expect(result.iterations).toBe(2);
    expect(detailsOf(result.events)).toEqual(['5 independent samples', '3/5 votes for "42"']);
  });

  it('sends every sample the task as its prompt, each on its own sub-agent', async () => {
    const prompts: string[] = [];
    await runStrategy({
      strategy: strategies.vote({ samples: 3 }),
      task: 'Name a prime',
      subAgent: answering((b) => {
        prompts.push(b.prompt);
        return '2';
      }),
    });
    expect(prompts).toEqual(['Name a prime', 'Name a prime', 'Name a prime']);
  });

  it('breaks a tie in favour of the answer seen first', async () => {
    const replies = ['red', 'blue', 'blue', 'red'];
    const result = await runStrategy({ strategy: strategies.vote({ samples: 4 }), task: 'colour?', subAgent: answering((_b, i) => replies[i.index] ?? '') });
    expect(result.text).toBe('red');
  });

  it('weighs each sample by its score in a scored vote', async () => {
    const replies = ['cheap guess', 'cheap guess', 'careful answer'];
    const result = await runStrategy({
      strategy: strategies.vote({ samples: 3, scorer: (t) => (t.content.startsWith('careful') ? 0.9 : 0.2) }),
      task: 'q',
      subAgent: answering((_b, i) => replies[i.index] ?? ''),
    });
    expect(result.text).toBe('careful answer');
    expect(detailsOf(result.events)[1]).toBe('"careful answer" won with score 0.90 of 1.30 (1/3 samples)');
  });

  it('can let the model score the samples', async () => {
    const replies = ['A', 'B', 'B'];
    const result = await runStrategy({
      strategy: strategies.vote({ samples: 3, scorer: 'model' }),
      task: 'q',
      model: judge((prompt) => (prompt.includes('Candidate:\nA') ? '10' : '1')),
      subAgent: answering((_b, i) => replies[i.index] ?? ''),
    });
    expect(result.text).toBe('A');
  });

  it('still votes when some samples fail, and says how many did', async () => {
    const result = await runStrategy({
      strategy: strategies.vote({ samples: 3 }),
      task: 'q',
      subAgent: answering((_b, i) => (i.index === 0 ? { error: new Error('boom') } : 'yes')),
    });
    expect(result.text).toBe('yes');
    expect(detailsOf(result.events)[1]).toBe('2/2 votes for "yes" (1 failed)');
  });

  it('fails when every sample fails', async () => {
    const error = await runStrategy({
      strategy: strategies.vote({ samples: 2 }),
      task: 'q',
      subAgent: answering(() => ({ error: new Error('down') })),
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'strategy_failed' });
    expect((error as StrategyRunError).result.thoughts.every((t) => typeof t.metadata?.error === 'string')).toBe(true);
  });
});
