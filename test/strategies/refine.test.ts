import { describe, expect, it } from 'vitest';
import { runStrategy, strategies } from '../../src/strategies/index.ts';
import type { Branch } from '../../src/core/strategy.ts';
import { answering, judge } from './support.ts';

const decisions = (events: readonly { runId: string; event: { type: string; decision?: string; detail?: string } }[]) =>
  events.flatMap((e) => (e.event.type === 'strategy.decided' ? [`${e.event.decision}: ${e.event.detail}`] : []));

describe('strategies.refine', () => {
  it('revises with the critic feedback until the critic accepts', async () => {
    const branches: Branch[] = [];
    const critiques = ['Too vague: name a number.', 'ACCEPT'];
    const result = await runStrategy({
      strategy: strategies.refine({ maxRevisions: 3, critique: () => critiques.shift() ?? 'ACCEPT' }),
      task: 'How many moons has Mars?',
      subAgent: answering((b) => {
        branches.push(b);
        return b.id === 'draft' ? 'a few' : 'two: Phobos and Deimos';
      }),
    });
    expect(result.text).toBe('two: Phobos and Deimos');
    expect(branches.map((b) => b.id)).toEqual(['draft', 'revision-1']);
    expect(branches[1]?.parentId).toBe('draft');
    expect(branches[1]?.prompt).toContain('Your previous answer:\na few');
    expect(branches[1]?.prompt).toContain("A reviewer's feedback:\nToo vague: name a number.");
    expect(decisions(result.events)).toEqual([
      'branch: 1 branch: draft',
      'revise: revision 1: Too vague: name a number.',
      'branch: 1 branch: revision-1',
      'done: critic accepted revision-1 after 1 revision',
    ]);
  });

  it('stops at maxRevisions with the latest draft when the critic never accepts', async () => {
    let critiques = 0;
    const result = await runStrategy({
      strategy: strategies.refine({
        maxRevisions: 2,
        critique: () => {
          critiques++;
          return 'Still wrong.';
        },
      }),
      task: 'q',
      subAgent: answering((b) => `answer of ${b.id}`),
    });
    expect(result.text).toBe('answer of revision-2');
    expect(critiques).toBe(3);
    expect(result.iterations).toBe(6);
    expect(decisions(result.events).at(-1)).toBe('done: max revisions (2) reached; critic still says: Still wrong.');
  });

  it('asks the model to critique by default and recognises its ACCEPT', async () => {
    const result = await runStrategy({
      strategy: strategies.refine(),
      task: 'Say hi',
      model: judge((prompt) => (prompt.includes('Proposed answer:\nhello there') ? 'ACCEPT' : 'Be friendlier.')),
      subAgent: answering((b) => (b.id === 'draft' ? 'hi' : 'hello there')),
    });
    expect(result.text).toBe('hello there');
    expect(result.iterations).toBe(4);
  });

  it('keeps the last good draft when a revision fails', async () => {
    const result = await runStrategy({
      strategy: strategies.refine({ critique: () => 'more' }),
      task: 'q',
      subAgent: answering((b) => (b.id === 'draft' ? 'first draft' : { error: new Error('down') })),
    });
    expect(result.text).toBe('first draft');
    expect(decisions(result.events).at(-1)).toMatch(/^done: revision 1 failed .*keeping draft$/);
  });
});
