/**
 * One provided agent machine per process: agents share its definition, and each run still
 * reaches its own agent's model, tools, gate and hydrator through the binding of its actor.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { createAgent, type Agent, type AgentConfig } from '../../src/agent/createAgent.ts';
import { bindRuntime, sharedAgentMachine } from '../../src/agent/sharedMachine.ts';
import { DEFAULTS } from '../../src/defaults.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';

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

describe('shared agent machine', () => {
  it('runs every agent on one machine definition', () => {
    const a = tagged('a', 0).start('go');
    const b = tagged('b', 0).start('go');
    expect(a.actor.logic).toBe(sharedAgentMachine);
    expect(b.actor.logic).toBe(a.actor.logic);
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
      experimental_hydrator: async () => ({ inject: [{ role: 'system', content: '[PRE_HYDRATED_CONTEXT] x' }] }),
    });
    const [p, h] = await Promise.all([plain.run('task'), hydrated.run('task')]);
    expect(p.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(h.messages.map((m) => m.content)).toEqual(['[PRE_HYDRATED_CONTEXT] x', 'task', 'hydrated']);
  });

  it('fails a run whose actor was never bound to a runtime, saying how to bind one', async () => {
    const limits = { ...DEFAULTS.loop };
    const actor = createActor(sharedAgentMachine, {
      input: { runId: 'run_unbound', agentId: 'nobody', task: 'go', limits, model: 'm', toolNames: [] },
    });
    actor.start();
    const output = await toPromise(actor);
    expect(output.reason).toBe('error');
    expect(output.errorData?.message).toMatch(/bindRuntime/);
  });

  it('runs an actor bound by hand', async () => {
    const actor = bindRuntime(
      createActor(sharedAgentMachine, {
        input: { runId: 'run_bound', agentId: 'manual', task: 'go', limits: { ...DEFAULTS.loop }, model: 'm', toolNames: [] },
      }),
      {
        reason: async () => ({ text: 'by hand', toolCalls: [], usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 }, costUsd: 0 }),
        gate: async () => ({ plan: [] }),
        act: async () => ({ outcomes: [] }),
      },
    );
    actor.start();
    expect((await toPromise(actor)).text).toBe('by hand');
  });
});
