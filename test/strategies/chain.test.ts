import { describe, expect, it } from 'vitest';
import { runStrategy, strategies } from '../../src/strategies/index.ts';
import { answering, judge } from './support.ts';

describe('strategies.chain', () => {
  it('builds each step from the previous ones, then answers with the last', async () => {
    const prompts: string[] = [];
    const model = judge((prompt) => {
      prompts.push(prompt);
      return `thought ${prompts.length}`;
    });
    const result = await runStrategy({ strategy: strategies.chain({ steps: 3 }), task: 'plan', model, subAgent: answering(() => 'unused') });
    expect(result.text).toBe('thought 3');
    expect(result.thoughts.map((t) => [t.id, t.parentId])).toEqual([
      ['step-1', undefined],
      ['step-2', 'step-1'],
      ['step-3', 'step-2'],
    ]);
    expect(prompts[0]).not.toContain('Steps so far');
    expect(prompts[2]).toContain('Step 1: thought 1\n\nStep 2: thought 2');
    expect(prompts[2]).toContain('give the final answer');
    const decided = result.events.flatMap((e) => (e.event.type === 'strategy.decided' ? [e.event.decision] : []));
    expect(decided).toEqual(['continue', 'continue', 'continue', 'done']);
  });

  it('follows per-step instructions', async () => {
    const prompts: string[] = [];
    await runStrategy({
      strategy: strategies.chain({ steps: 2, instructions: ['List the facts.', 'Conclude.'] }),
      task: 't',
      model: judge((p) => {
        prompts.push(p);
        return 'ok';
      }),
      subAgent: answering(() => 'unused'),
    });
    expect(prompts.map((p) => p.split('\n').at(-1))).toEqual(['List the facts.', 'Conclude.']);
  });

  it('runs each step as a sub-agent with `via: agent`', async () => {
    const seen: string[] = [];
    const result = await runStrategy({
      strategy: strategies.chain({ steps: 2, via: 'agent' }),
      task: 't',
      subAgent: answering((b) => {
        seen.push(b.prompt);
        return `agent ${b.id}`;
      }),
    });
    expect(result.text).toBe('agent step-2');
    expect(seen[1]).toContain('Step 1: agent step-1');
    expect(result.iterations).toBe(3);
  });
});
