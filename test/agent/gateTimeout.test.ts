/**
 * A gate whose promise never settles must not hold a run in the gate phase forever: after
 * `policy.gateTimeoutMs` the call is denied (fail closed), the model is told the policy did not
 * answer in time, and the journal says which gate failed and how. A human's approval is a wait
 * of its own and is never timed out this way.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { JournalEntry, LoopEventOf } from '../../src/core/loopEvent.ts';
import { gates } from '../../src/policy/gates.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { agentWithEntries as agentWith, stopTrackedAgents, toolMessages } from '../support/agents.ts';

afterEach(() => {
  vi.useRealTimers();
  stopTrackedAgents();
});

function policyEvents(entries: readonly JournalEntry[]): LoopEventOf<'policy.evaluated'>[] {
  return entries.map((e) => e.event).filter((e): e is LoopEventOf<'policy.evaluated'> => e.type === 'policy.evaluated');
}

function deleter(ran: string[]) {
  return defineTool({
    name: 'delete_file',
    description: 'Delete a file',
    input: z.object({ path: z.string() }),
    execute: ({ path }) => {
      ran.push(path);
      return `deleted ${path}`;
    },
  });
}

const hanging = gates.fromFunction('remote-policy', () => new Promise<never>(() => undefined));

describe('a gate that never decides', () => {
  it('denies the call after policy.gateTimeoutMs, tells the model the policy did not answer in time, and journals the failure', async () => {
    vi.useFakeTimers();
    const ran: string[] = [];
    const model = scriptedModel([{ toolCalls: [{ id: 'd1', name: 'delete_file', arguments: { path: 'a.txt' } }] }, { text: 'gave up on deleting' }]);
    const { agent, entries } = agentWith({ model, tools: [deleter(ran)], policy: { gate: hanging, gateTimeoutMs: 5_000 } });
    const run = agent.start('delete a.txt');
    await vi.advanceTimersByTimeAsync(4_999);
    expect(run.phase()).toBe('gate');
    await vi.advanceTimersByTimeAsync(1);
    const result = await run.result;
    expect(result.text).toBe('gave up on deleting');
    expect(ran).toEqual([]);
    const [observation] = toolMessages(model.calls[1]?.messages ?? []);
    expect(observation).toMatchObject({ toolCallId: 'd1', isError: true });
    expect(observation?.content).toMatch(/^Denied by policy: .*"remote-policy" did not answer in time \(gates fail closed\)/);
    expect(policyEvents(entries)).toEqual([
      expect.objectContaining({ toolCallId: 'd1', decision: 'deny', gateFailure: { gate: 'remote-policy', failure: 'timed_out' } }),
    ]);
  });

  it('waits 30 seconds by default', async () => {
    vi.useFakeTimers();
    const model = scriptedModel([{ toolCalls: [{ id: 'd1', name: 'delete_file', arguments: { path: 'a.txt' } }] }, { text: 'done' }]);
    const { agent } = agentWith({ model, tools: [deleter([])], policy: { gate: hanging } });
    const run = agent.start('delete a.txt');
    await vi.advanceTimersByTimeAsync(29_999);
    expect(run.phase()).toBe('gate');
    await vi.advanceTimersByTimeAsync(1);
    expect((await run.result).text).toBe('done');
  });

  it('journals a gate that throws as a gate failure too, not as a decision', async () => {
    const model = scriptedModel([{ toolCalls: [{ id: 'd1', name: 'delete_file', arguments: { path: 'a.txt' } }] }, { text: 'done' }]);
    const broken = gates.fromFunction('broken', () => {
      throw new Error('policy store down');
    });
    const { agent, entries } = agentWith({ model, tools: [deleter([])], policy: { gate: broken } });
    await agent.run('delete a.txt');
    expect(policyEvents(entries)).toEqual([expect.objectContaining({ decision: 'deny', gateFailure: { gate: 'broken', failure: 'threw' } })]);
  });

  it('does not time out a human approval the gate asked for', async () => {
    vi.useFakeTimers();
    const ran: string[] = [];
    const model = scriptedModel([{ toolCalls: [{ id: 'd1', name: 'delete_file', arguments: { path: 'a.txt' } }] }, { text: 'deleted' }]);
    const asks = gates.fromFunction('ask-first', async () => ({ kind: 'confirm', reason: 'Delete a.txt?' }));
    const { agent } = agentWith({ model, tools: [deleter(ran)], policy: { gate: asks, gateTimeoutMs: 1_000 }, limits: { timeoutMs: 24 * 3_600_000 } });
    const run = agent.start('delete a.txt');
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(run.phase()).toBe('awaitingHuman');
    run.approve();
    expect((await run.result).text).toBe('deleted');
    expect(ran).toEqual(['a.txt']);
  });
});
