/**
 * Stuck detection through createAgent: a model repeating the same call, or hitting the same
 * error, ends with RunError (stuck) (or is redirected once). Detection is on by default (five
 * identical calls); with `stuckDetection: false` the iteration budget ends the same runaway model.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, type Agent, type AgentConfig } from '../../src/agent/createAgent.ts';
import type { ToolMessage } from '../../src/core/messages.ts';
import { ConfigurationError } from '../../src/core/errors.ts';
import type { LoopEvent } from '../../src/core/loopEvent.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import type { RunError, RunLimitError } from '../../src/agent/errors.ts';

const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
});
function agentWith(config: AgentConfig): Agent {
  const agent = createAgent(config);
  agents.push(agent);
  return agent;
}

const echo = defineTool({ name: 'echo', description: 'Echo', input: z.object({ v: z.string() }), execute: ({ v }) => v });
const fetchUrl = defineTool({
  name: 'fetch_url',
  description: 'Fetch a URL',
  input: z.object({ url: z.string() }),
  execute: ({ url }): string => {
    throw new Error(`ECONNREFUSED 10.0.0.7:443 while fetching ${url}`);
  },
});
const loopForever = () => scriptedModel(() => ({ toolCalls: [{ name: 'echo', arguments: { v: 'again' } }] }));

function eventsOf(agent: Agent, runId: string): LoopEvent[] {
  return agent.journal.entries(runId).map((entry) => entry.event);
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the run to fail');
    },
    (error: unknown) => error,
  );
}

describe('stuck detection', () => {
  it('ends a model repeating the same call with RunError (stuck) after maxRepeats, carrying the run id and result', async () => {
    const agent = agentWith({ model: loopForever(), tools: [echo], resilience: { stuckDetection: { maxRepeats: 3 } }, limits: { maxIterations: 20 } });
    const error = await rejection(agent.run('repeat yourself', { runId: 'run-stuck' }));
    expect(error).toMatchObject({ code: 'stuck' });
    const stuck = error as RunError;
    expect(stuck.code).toBe('stuck');
    expect(stuck.blame).toBe('model');
    expect(stuck.runId).toBe('run-stuck');
    expect(stuck.result).toMatchObject({ runId: 'run-stuck', status: 'failed', reason: 'stuck', iterations: 3 });
    expect(stuck.result.error).toMatchObject({ code: 'stuck', message: 'the model called "echo" with the same arguments 3 times in a row' });
    expect(stuck.message).toMatch(/stopped as stuck in a loop: the model called "echo"/);
    // The third call's observation is in the conversation: the run ended after observing it.
    expect(stuck.result.messages.filter((m) => m.role === 'tool')).toHaveLength(3);
    const events = eventsOf(agent, 'run-stuck');
    expect(events.filter((e) => e.type === 'stuck.detected')).toEqual([
      { type: 'stuck.detected', reason: 'the model called "echo" with the same arguments 3 times in a row', action: 'stop' },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'run.terminated', reason: 'stuck', iterations: 3, error: { code: 'stuck' } });
  });

  it('ends a run whose tool keeps failing with near-identical errors (different arguments each time)', async () => {
    const model = scriptedModel((_request, i) => ({ toolCalls: [{ name: 'fetch_url', arguments: { url: `https://example.com/page/${i}` } }] }));
    const agent = agentWith({ model, tools: [fetchUrl], resilience: { stuckDetection: { maxRepeats: 3 } }, limits: { maxIterations: 20 } });
    const run = agent.start('fetch the pages');
    const result = await run.settled;
    expect(result).toMatchObject({ status: 'failed', reason: 'stuck', iterations: 3 });
    expect(result.error?.message).toMatch(/^3 consecutive tool errors were near-identical .*ECONNREFUSED/);
    await expect(run.result).rejects.toMatchObject({ code: 'stuck' });
    expect(eventsOf(agent, run.runId).filter((e) => e.type === 'stuck.detected').map((e) => (e as { action: string }).action)).toEqual(['stop']);
  });

  it('in redirect mode tells the model it is repeating itself; a model that changes approach finishes', async () => {
    const model = scriptedModel((request) => {
      const last = request.messages.at(-1);
      if (last?.role === 'tool' && last.content.startsWith('[actorloop]')) return { text: 'Changed approach: the answer is "again".' };
      return { toolCalls: [{ name: 'echo', arguments: { v: 'again' } }] };
    });
    const agent = agentWith({ model, tools: [echo], resilience: { stuckDetection: { maxRepeats: 3, action: 'redirect' } } });
    const run = agent.start('repeat yourself');
    const result = await run.result;
    expect(result).toMatchObject({ status: 'done', reason: 'final_answer', iterations: 4 });
    expect(result.text).toMatch(/Changed approach/);
    // What the model saw: the third observation carries the note, then the tool's own output.
    const seen = model.calls[3]?.messages.filter((m): m is ToolMessage => m.role === 'tool') ?? [];
    expect(seen.map((m) => m.content.startsWith('[actorloop]'))).toEqual([false, false, true]);
    expect(seen[2]?.content).toMatch(/same arguments 3 times in a row[\s\S]*Change your approach[\s\S]*\n\nagain$/);
    expect(eventsOf(agent, run.runId).filter((e) => e.type === 'stuck.detected')).toEqual([
      { type: 'stuck.detected', reason: 'the model called "echo" with the same arguments 3 times in a row', action: 'redirect' },
    ]);
  });

  it('in redirect mode stops a model that repeats again after the note', async () => {
    const agent = agentWith({ model: loopForever(), tools: [echo], resilience: { stuckDetection: { maxRepeats: 3, action: 'redirect' } }, limits: { maxIterations: 20 } });
    const run = agent.start('repeat yourself');
    const result = await run.settled;
    expect(result).toMatchObject({ status: 'failed', reason: 'stuck', iterations: 4 });
    await expect(run.result).rejects.toMatchObject({ code: 'stuck' });
    expect(eventsOf(agent, run.runId).filter((e) => e.type === 'stuck.detected').map((e) => (e as { action: string }).action)).toEqual([
      'redirect',
      'stop',
    ]);
  });

  it('is on when not configured: five identical calls in a row end the run as stuck', async () => {
    const agent = agentWith({ model: loopForever(), tools: [echo], limits: { maxIterations: 20 } });
    const run = agent.start('repeat yourself');
    const result = await run.settled;
    expect(result).toMatchObject({ status: 'failed', reason: 'stuck', iterations: 5 });
    expect(result.error?.message).toBe('the model called "echo" with the same arguments 5 times in a row');
    expect(eventsOf(agent, run.runId).filter((e) => e.type === 'stuck.detected')).toHaveLength(1);
  });

  it('does not stop a model that repeats a call four times and then moves on', async () => {
    const model = scriptedModel((_request, i) => (i < 4 ? { toolCalls: [{ name: 'echo', arguments: { v: 'again' } }] } : { text: 'done' }));
    const agent = agentWith({ model, tools: [echo] });
    const result = await agent.run('repeat a little');
    expect(result).toMatchObject({ status: 'done', iterations: 5 });
  });

  it('is off with stuckDetection: false: the same runaway model ends with RunLimitError (max_iterations) instead', async () => {
    const agent = agentWith({ model: loopForever(), tools: [echo], limits: { maxIterations: 6 }, resilience: { stuckDetection: false } });
    const run = agent.start('repeat yourself');
    const error = await rejection(run.result);
    expect(error).toMatchObject({ code: 'max_iterations' });
    expect((error as RunLimitError).result.iterations).toBe(6);
    const events = eventsOf(agent, run.runId);
    expect(events.some((e) => e.type === 'stuck.detected')).toBe(false);
    // Observations are untouched: no note reaches the model.
    expect((error as RunLimitError).result.messages.some((m) => m.role === 'tool' && m.content.includes('[actorloop]'))).toBe(false);
  });

  it('rejects invalid stuckDetection options when the agent is created', () => {
    expect(() => createAgent({ model: loopForever(), tools: [echo], resilience: { stuckDetection: { maxRepeats: 1 } } })).toThrow(ConfigurationError);
  });
});
