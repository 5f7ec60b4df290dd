/**
 * Recovery strategies and circuit breakers through `createAgent`: each strategy's effect on what
 * the model sees, and the `recovery.triggered` event it announces itself with.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from 'xstate';
import { z } from 'zod';
import type { JournalEntry, LoopEventOf } from '../../src/core/loopEvent.ts';
import { recovery, type RecoveryStrategy } from '../../src/resilience/recovery.ts';
import { scriptedModel, type ScriptStep } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { agentWithEntries as agentWith, stopTrackedAgents, toolMessages } from '../support/agents.ts';

afterEach(stopTrackedAgents);

function recoveries(entries: readonly JournalEntry[]): LoopEventOf<'recovery.triggered'>[] {
  return entries.map((e) => e.event).filter((e): e is LoopEventOf<'recovery.triggered'> => e.type === 'recovery.triggered');
}

function finished(entries: readonly JournalEntry[]): LoopEventOf<'tool.finished'>[] {
  return entries.map((e) => e.event).filter((e): e is LoopEventOf<'tool.finished'> => e.type === 'tool.finished');
}

const QueryInput = z.object({ q: z.string() });

/** A tool that fails its first `failures` calls, then answers. */
function flaky(name: string, failures: number, strategy?: RecoveryStrategy) {
  const state = { calls: 0 };
  const tool = defineTool({
    name,
    description: `${name} (flaky)`,
    input: QueryInput,
    ...(strategy === undefined ? {} : { recovery: strategy }),
    execute: ({ q }) => {
      state.calls++;
      if (state.calls <= failures) throw new Error(`${name} unavailable (call ${state.calls})`);
      return `${name} says ${q}`;
    },
  });
  return { tool, state };
}

const call = (id: string, name: string, q = 'x'): ScriptStep => ({ toolCalls: [{ id, name, arguments: { q } }] });

describe('recovery strategies through createAgent', () => {
  it('retry: a tool failing twice then succeeding answers on the 3rd attempt, each retry announced', async () => {
    const { tool, state } = flaky('search', 2, recovery.retry({ maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 }));
    const model = scriptedModel([call('c1', 'search', 'cats'), { text: 'found' }]);
    const { agent, entries } = agentWith({ model, tools: [tool] });
    const result = await agent.run('search cats');
    expect(state.calls).toBe(3);
    expect(toolMessages(result.messages)).toEqual([{ role: 'tool', toolCallId: 'c1', name: 'search', content: 'search says cats' }]);
    expect(recoveries(entries).map((e) => [e.strategy, e.attempt, e.error])).toEqual([
      ['retry', 1, 'Error: search unavailable (call 1)'],
      ['retry', 2, 'Error: search unavailable (call 2)'],
    ]);
    const starts = entries.map((e) => e.event).filter((e) => e.type === 'tool.started');
    expect(starts.map((e) => (e as LoopEventOf<'tool.started'>).attempt)).toEqual([1, 2, 3]);
    expect(finished(entries)).toMatchObject([{ toolCallId: 'c1', status: 'ok' }]);
  });

  it('retry: gives up after maxAttempts and tells the model how many attempts were made', async () => {
    const { tool, state } = flaky('search', 100, recovery.retry({ maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 }));
    const model = scriptedModel([call('c1', 'search'), { text: 'giving up' }]);
    const { agent, entries } = agentWith({ model, tools: [tool], resilience: { breakers: false } });
    const result = await agent.run('search');
    expect(state.calls).toBe(3);
    expect(toolMessages(result.messages)[0]).toMatchObject({ isError: true, content: 'Error: search unavailable (call 3) (gave up after 3 attempts)' });
    expect(recoveries(entries)).toHaveLength(2);
  });

  it('fallback: another tool answers and the content says so', async () => {
    const primary = flaky('primary_search', 100, recovery.fallback('backup_search'));
    const backup = flaky('backup_search', 0);
    const model = scriptedModel([call('c1', 'primary_search', 'dogs'), { text: 'ok' }]);
    const { agent, entries } = agentWith({ model, tools: [primary.tool, backup.tool] });
    const result = await agent.run('search dogs');
    expect(primary.state.calls).toBe(1);
    expect(backup.state.calls).toBe(1);
    const observation = toolMessages(result.messages)[0];
    expect(observation?.content).toBe('(answered by fallback tool "backup_search") backup_search says dogs');
    expect(observation?.isError).toBeUndefined();
    expect(recoveries(entries)).toEqual([
      { type: 'recovery.triggered', toolCallId: 'c1', tool: 'primary_search', strategy: 'fallback', attempt: 1, error: 'Error: primary_search unavailable (call 1)' },
    ]);
    expect(finished(entries)).toMatchObject([{ toolCallId: 'c1', tool: 'primary_search', status: 'fallback' }]);
  });

  it('fallback: when the fallback fails too, the model gets both errors', async () => {
    const primary = flaky('primary_search', 100, recovery.fallback('backup_search'));
    const backup = flaky('backup_search', 100);
    const model = scriptedModel([call('c1', 'primary_search'), { text: 'ok' }]);
    const { agent } = agentWith({ model, tools: [primary.tool, backup.tool] });
    const result = await agent.run('search');
    const observation = toolMessages(result.messages)[0];
    expect(observation?.isError).toBe(true);
    expect(observation?.content).toContain('primary_search unavailable');
    expect(observation?.content).toContain('fallback "backup_search" failed too: Error: backup_search unavailable');
  });

  it('cached: a failing call answers with the last successful result of the same arguments, with a note', async () => {
    let healthy = true;
    const quote = defineTool({
      name: 'quote',
      description: 'Stock quote',
      input: z.object({ symbol: z.string() }),
      recovery: recovery.cached({ maxAgeMs: 60_000 }),
      execute: ({ symbol }) => {
        if (!healthy) throw new Error('quote service down');
        return `${symbol}: 42.00`;
      },
    });
    const model = scriptedModel([
      { toolCalls: [{ id: 'q1', name: 'quote', arguments: { symbol: 'ACME' } }] },
      { text: 'first answer' },
      { toolCalls: [{ id: 'q2', name: 'quote', arguments: { symbol: 'ACME' } }] },
      { text: 'second answer' },
    ]);
    const { agent, entries } = agentWith({ model, tools: [quote] });
    await agent.run('quote ACME');
    expect(recoveries(entries)).toEqual([]);
    healthy = false;
    const second = await agent.run('quote ACME again');
    const observation = toolMessages(second.messages)[0];
    expect(observation?.content).toMatch(/^\(cached result from 0 s ago; the live call failed\) ACME: 42\.00$/);
    expect(observation?.isError).toBeUndefined();
    expect(recoveries(entries)).toMatchObject([{ toolCallId: 'q2', tool: 'quote', strategy: 'cached', error: 'Error: quote service down' }]);
    expect(finished(entries).map((e) => e.status)).toEqual(['ok', 'cached']);
  });

  it('cached: a miss (no earlier success for these arguments) is an error observation', async () => {
    let calls = 0;
    const quote = defineTool({
      name: 'quote',
      description: 'Stock quote',
      input: z.object({ symbol: z.string() }),
      recovery: recovery.cached(),
      execute: ({ symbol }) => {
        calls++;
        if (calls >= 2) throw new Error('quote service down');
        return `${symbol}: 1`;
      },
    });
    const model = scriptedModel([
      { toolCalls: [{ id: 'q1', name: 'quote', arguments: { symbol: 'ACME' } }] },
      { toolCalls: [{ id: 'q2', name: 'quote', arguments: { symbol: 'OTHER' } }] },
      { text: 'done' },
    ]);
    const { agent, entries } = agentWith({ model, tools: [quote] });
    const result = await agent.run('two quotes');
    const [first, second] = toolMessages(result.messages);
    expect(first?.content).toBe('ACME: 1');
    expect(second).toMatchObject({ toolCallId: 'q2', isError: true, content: 'Error: quote service down (no cached result to fall back on)' });
    expect(recoveries(entries)).toMatchObject([{ toolCallId: 'q2', strategy: 'cached' }]);
  });

  it('askModel (the default): the error goes to the model as an error observation', async () => {
    const { tool } = flaky('search', 100);
    const model = scriptedModel([call('c1', 'search'), { text: 'sorry' }]);
    const { agent, entries } = agentWith({ model, tools: [tool] });
    const result = await agent.run('search');
    expect(result.text).toBe('sorry');
    expect(toolMessages(model.calls[1]?.messages ?? [])).toEqual([
      { role: 'tool', toolCallId: 'c1', name: 'search', content: 'Error: search unavailable (call 1)', isError: true },
    ]);
    expect(recoveries(entries)).toEqual([
      { type: 'recovery.triggered', toolCallId: 'c1', tool: 'search', strategy: 'askModel', attempt: 1, error: 'Error: search unavailable (call 1)' },
    ]);
  });

  it('escalate: the run waits in awaitingHuman (kind escalation); approve re-runs the call', async () => {
    const { tool, state } = flaky('deploy', 1, recovery.escalate());
    const model = scriptedModel([call('d1', 'deploy', 'v2'), { text: 'deployed' }]);
    const { agent, entries } = agentWith({ model, tools: [tool] });
    const run = agent.start('deploy v2');
    await waitFor(run.actor, (s) => s.matches({ running: 'awaitingHuman' }), { timeout: 2_000 });
    expect(run.phase()).toBe('awaitingHuman');
    expect(run.actor.getSnapshot().context.pending).toEqual({ kind: 'escalation', toolCallIds: ['d1'] });
    expect(entries.map((e) => e.event)).toContainEqual({ type: 'human.awaiting', kind: 'escalation', toolCallIds: ['d1'] });
    expect(recoveries(entries)).toMatchObject([{ toolCallId: 'd1', strategy: 'escalate', error: 'Error: deploy unavailable (call 1)' }]);
    expect(model.calls).toHaveLength(1);
    run.approve();
    const result = await run.result;
    expect(state.calls).toBe(2);
    expect(toolMessages(result.messages)).toEqual([{ role: 'tool', toolCallId: 'd1', name: 'deploy', content: 'deploy says v2' }]);
  });

  it('escalate: reject feeds the rejection back and does not run the call again', async () => {
    const { tool, state } = flaky('deploy', 1, recovery.escalate());
    const model = scriptedModel([call('d1', 'deploy'), { text: 'not deployed' }]);
    const { agent } = agentWith({ model, tools: [tool] });
    const run = agent.start('deploy');
    await waitFor(run.actor, (s) => s.matches({ running: 'awaitingHuman' }), { timeout: 2_000 });
    run.reject('freeze week');
    await run.result;
    expect(state.calls).toBe(1);
    const observation = toolMessages(model.calls[1]?.messages ?? [])[0];
    expect(observation).toMatchObject({ toolCallId: 'd1', isError: true });
    expect(observation?.content).toContain('freeze week');
  });

  it('deadLetter: the failure is recorded in agent.deadLetters() and the loop continues', async () => {
    const { tool } = flaky('notify', 100, recovery.deadLetter());
    const ok = flaky('lookup', 0);
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'n1', name: 'notify', arguments: { q: 'hello' } },
          { id: 'l1', name: 'lookup', arguments: { q: 'y' } },
        ],
      },
      { text: 'continued' },
    ]);
    const { agent, entries } = agentWith({ model, tools: [tool, ok.tool] });
    const result = await agent.run('notify and look up');
    expect(result.text).toBe('continued');
    expect(agent.deadLetters()).toEqual([
      {
        runId: result.runId,
        agentId: agent.id,
        toolCallId: 'n1',
        tool: 'notify',
        arguments: { q: 'hello' },
        error: 'Error: notify unavailable (call 1)',
        at: expect.any(Number),
      },
    ]);
    const [dead, fine] = toolMessages(result.messages);
    expect(dead).toMatchObject({ toolCallId: 'n1', isError: true });
    expect(dead?.content).toContain('recorded for later handling');
    expect(fine).toMatchObject({ toolCallId: 'l1', content: 'lookup says y' });
    expect(recoveries(entries)).toMatchObject([{ toolCallId: 'n1', strategy: 'deadLetter' }]);
  });

  it('uses the agent-level default strategy for tools that declare none', async () => {
    const { tool } = flaky('notify', 100);
    const model = scriptedModel([call('n1', 'notify'), { text: 'ok' }]);
    const { agent, entries } = agentWith({ model, tools: [tool], resilience: { recovery: recovery.deadLetter() } });
    await agent.run('notify');
    expect(agent.deadLetters().map((d) => d.toolCallId)).toEqual(['n1']);
    expect(recoveries(entries).map((e) => e.strategy)).toEqual(['deadLetter']);
  });
});

describe('circuit breakers through createAgent', () => {
  it('opens after 3 consecutive failures; the 4th call is refused at once without executing', async () => {
    const { tool, state } = flaky('weather', 100);
    const model = scriptedModel([
      call('w1', 'weather'),
      call('w2', 'weather'),
      call('w3', 'weather'),
      call('w4', 'weather'),
      { text: 'weather is unavailable' },
    ]);
    const { agent, entries } = agentWith({ model, tools: [tool] });
    const result = await agent.run('weather?');
    expect(state.calls).toBe(3);
    const observations = toolMessages(result.messages);
    expect(observations.map((m) => m.isError)).toEqual([true, true, true, true]);
    expect(observations[3]?.content).toMatch(/^Tool "weather" is failing repeatedly, so its circuit breaker is open: the call was not made\./);
    // The refused call never started: 3 tool.started events for 4 calls.
    expect(entries.filter((e) => e.event.type === 'tool.started')).toHaveLength(3);
    expect(finished(entries).map((e) => e.status)).toEqual(['error', 'error', 'error', 'circuit_open']);
  });

  it('a success in between resets the count; per-tool overrides change the threshold', async () => {
    let n = 0;
    const sometimes = defineTool({
      name: 'sometimes',
      description: 'Fails except on every third call',
      input: QueryInput,
      execute: () => {
        n++;
        if (n % 3 !== 0) throw new Error(`fail ${n}`);
        return 'ok';
      },
    });
    const steps: ScriptStep[] = [1, 2, 3, 4, 5, 6].map((i) => call(`s${i}`, 'sometimes'));
    const model = scriptedModel([...steps, { text: 'done' }]);
    // Six identical calls on purpose: stuck detection would end the run at the fifth.
    const { agent } = agentWith({ model, tools: [sometimes], resilience: { breakers: { perTool: { sometimes: { failureThreshold: 3 } } } , stuckDetection: false } });
    const result = await agent.run('go');
    // fail, fail, ok, fail, fail, ok: never 3 in a row, so every call ran.
    expect(n).toBe(6);
    expect(toolMessages(result.messages).every((m) => !m.content.includes('circuit breaker is open'))).toBe(true);

    const { tool, state } = flaky('strict', 100);
    const strictModel = scriptedModel([call('a', 'strict'), call('b', 'strict'), { text: 'done' }]);
    const strict = agentWith({ model: strictModel, tools: [tool], resilience: { breakers: { perTool: { strict: { failureThreshold: 1 } } } } });
    const strictResult = await strict.agent.run('go');
    expect(state.calls).toBe(1);
    expect(toolMessages(strictResult.messages)[1]?.content).toContain('circuit breaker is open');
  });
});
