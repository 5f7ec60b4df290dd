/**
 * A strategy over an existing agent: every branch is one of its runs, and the strategy's own
 * completions use the agent's model unless another is given.
 */
import { describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/createAgent.ts';
import { runStrategy } from '../../src/strategies/runStrategy.ts';
import type { ReasoningStrategy } from '../../src/core/strategy.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { promptOf } from './support.ts';

/** Two branches, then one direct completion that picks the answer. */
const pickOne: ReasoningStrategy<void, null> = {
  name: 'pick',
  init: () => null,
  step: (state, ctx) => ({ kind: 'branch', branches: [0, 1].map((i) => ({ id: `b${i}`, prompt: `${ctx.task} #${i}` })), state }),
  aggregate: async (thoughts, state, ctx) => {
    const choice = await ctx.complete(`pick one of: ${thoughts.map((t) => t.content).join(' | ')}`);
    return { kind: 'done', answer: choice, state };
  },
};

describe('runStrategy over an Agent', () => {
  it("runs every branch as a run of the agent and completes with the agent's model", async () => {
    const model = scriptedModel((request) => ({ text: promptOf(request).startsWith('pick') ? 'picked' : `answer to ${promptOf(request)}` }));
    const agent = createAgent({ id: 'solver', model });

    const result = await runStrategy({ strategy: pickOne, task: 'solve', subAgent: agent });

    expect(result.status).toBe('done');
    const branchRuns = new Set(agent.journal.entries().map((entry) => entry.runId));
    expect(branchRuns.size).toBe(2);
    expect(model.calls.map((call) => promptOf(call))).toEqual(expect.arrayContaining(['solve #0', 'solve #1', 'pick one of: answer to solve #0 | answer to solve #1']));
    // The agent is left running: it takes more work afterwards.
    await expect(agent.run('again')).resolves.toMatchObject({ status: 'done' });
  });

  it('uses the model given for completions over the sub-agent config', async () => {
    const judge = scriptedModel(() => ({ text: 'judged' }));
    const worker = scriptedModel(() => ({ text: 'work' }));
    await runStrategy({ strategy: pickOne, task: 'solve', subAgent: { model: worker }, model: judge });
    expect(judge.calls).toHaveLength(1);
    expect(worker.calls).toHaveLength(2);
  });
});
