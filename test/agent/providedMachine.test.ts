/**
 * Each agent provides the agent machine with its own phases (`provide()`), once: its runs share
 * that machine, and each run reaches its own agent's model, tools, gate and hydrator.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { createAgent, type Agent, type AgentConfig } from '../../src/agent/createAgent.ts';
import { agentMachine } from '../../machines/agent.machine.ts';
import type { AgentMachineInput } from '../../machines/agent.types.ts';
import { phaseRunner, type PhaseImplementations } from '../../machines/phaseRunner.ts';
import { DEFAULTS } from '../../src/core/defaults.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';

/** An actor of the agent machine provided with `phases` by hand. */
const runnerActor = (input: AgentMachineInput, phases: Partial<PhaseImplementations>) =>
  createActor(agentMachine.provide({ actors: { phases: phaseRunner(phases) } }), { input });

const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
});

function agentWith(config: AgentConfig): Agent {
  const agent = createAgent(config);
  agents.push(agent);
  return agent;
}

/** An agent whose tool tags its result, so a result shows which agent's tool ran. */
function tagged(tag: string, delayMs: number): Agent {
  const tool = defineTool({
    name: 'tag',
    description: 'Return the tag of the agent that owns this tool.',
    input: z.object({}),
    execute: () => `tool of ${tag}`,
  });
  const model = scriptedModel((request) => {
    const last = request.messages[request.messages.length - 1];
    if (last?.role === 'tool') return { text: `${tag} saw: ${last.content}`, delayMs };
    return { toolCalls: [{ name: 'tag', arguments: {} }], delayMs };
  });
  return agentWith({ model, tools: [tool] });
}

describe('provided agent machine', () => {
  it("runs an agent's runs on its own provided machine, shared between them", () => {
    const first = tagged('a', 0);
    const a1 = first.start('go');
    const a2 = first.start('again');
    const b = tagged('b', 0).start('go');
    expect(a1.actor.logic).toBe(a2.actor.logic);
    expect(b.actor.logic).not.toBe(a1.actor.logic);
    expect(a1.actor.logic).not.toBe(agentMachine);
    expect(a1.actor.logic.id).toBe(agentMachine.id);
  });

  it("keeps concurrent runs of different agents on their own agent's model and tools", async () => {
    const first = tagged('first', 5);
    const second = tagged('second', 1);
    const results = await Promise.all([first.run('go'), second.run('go'), first.run('again'), second.run('again')]);
    expect(results.map((r) => r.text)).toEqual([
      'first saw: tool of first',
      'second saw: tool of second',
      'first saw: tool of first',
      'second saw: tool of second',
    ]);
  });

  it("uses the agent's hydrator when it has one and injects nothing otherwise", async () => {
    const plain = agentWith({ model: scriptedModel([{ text: 'plain' }]) });
    const hydrated = agentWith({
      model: scriptedModel([{ text: 'hydrated' }]),
      context: { experimental_hydrator: async () => ({ inject: [{ role: 'system', content: '[PRE_HYDRATED_CONTEXT] x' }] }) },
    });
    const [p, h] = await Promise.all([plain.run('task'), hydrated.run('task')]);
    expect(p.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(h.messages.map((m) => m.content)).toEqual(['[PRE_HYDRATED_CONTEXT] x', 'task', 'hydrated']);
  });

  it('fails a run of the machine provided with no phases, saying what to supply', async () => {
    const limits = { ...DEFAULTS.loop };
    const actor = createActor(agentMachine, {
      input: { runId: 'run_unbound', agentId: 'nobody', task: 'go', limits, model: 'm', toolNames: [] },
    });
    actor.start();
    const output = await toPromise(actor);
    expect(output.reason).toBe('error');
    expect(output.errorData?.message).toMatch(/agentMachine\.provide/);
  });

  it('runs an actor bound by hand', async () => {
    const actor = runnerActor({ runId: 'run_bound', agentId: 'manual', task: 'go', limits: { ...DEFAULTS.loop }, model: 'm', toolNames: [] }, {
        reason: async () => ({ text: 'by hand', toolCalls: [], usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 }, costUsd: 0 }),
        gate: async () => ({ plan: [] }),
        act: async () => ({ outcomes: [] }),
      });
    actor.start();
    expect((await toPromise(actor)).text).toBe('by hand');
  });
});
