/**
 * Failures outside a run's own logic leave it resumable: a provider that stays down past every
 * retry, a network that drops every connection (a real OpenAI-compatible server on 127.0.0.1),
 * and the run's wall-clock limit. Once the cause is gone, `resume` continues the run from its
 * last step, with one assistant message per turn. A run's own decisions stay final.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../src/agent/createAgent.ts';
import type { LoopResult } from '../../src/core/run.ts';
import { openAICompatible } from '../../src/inference/openaiCompatible.ts';
import { createFileStore, type RunStore } from '../../src/persistence/fileStore.ts';
import { readRunEnd } from '../../src/persistence/runLog.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { reply, useOpenAIServer } from '../support/openaiServer.ts';
import { echoTool, removeTempDirs, runFiles, tempDir } from './support.ts';

const openai = useOpenAIServer();
afterAll(removeTempDirs);
const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
});

/** An agent on the local server: retries after 1–2 ms instead of seconds, so exhausting them is quick. */
function httpAgent(store: RunStore, executions: string[] = []): Agent {
  const model = openAICompatible({
    baseURL: openai().baseURL,
    apiKey: 'test',
    model: 'gpt-4o-mini',
    env: {},
    timeoutMs: 10_000,
    retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 2 },
  });
  const agent = createAgent({ id: 'agent_http', model, tools: [echoTool(executions)], persistence: { store } });
  agents.push(agent);
  return agent;
}

const toolCall = reply.completion({ toolCalls: [{ id: 'call_0', name: 'echo', argumentPieces: ['{"word":"hi"}'] }] });
const answer = reply.completion({ textPieces: ['finished'] });

/** The roles of the conversations the server was sent, request by request. */
const rolesSent = () => openai().requests.map((request) => (request.body as { messages: { role: string }[] }).messages.map((m) => m.role).join(','));

async function expectResumableFailure(store: RunStore, result: LoopResult, code: string): Promise<void> {
  expect(result).toMatchObject({ status: 'failed', reason: 'error', resumable: true, error: { code } });
  expect(readRunEnd(runFiles(store, result.runId).log)).toMatchObject({ status: 'failed', resumable: true, error: { code } });
  expect(await store.getRun(result.runId)).toMatchObject({ status: 'failed', resumable: true, error: { code } });
}

describe('a run that failed for a reason outside its own logic', () => {
  it('provider down past every retry: failed and resumable; resumed once it is back, one assistant message per turn', async () => {
    const store = createFileStore({ dir: tempDir() });
    const executions: string[] = [];
    openai().enqueue(toolCall, ...Array.from({ length: 4 }, () => reply.error(503, 'upstream unavailable')));
    const failed = await httpAgent(store, executions).start('say hi', { runId: 'run_down' }).settled;
    await expectResumableFailure(store, failed, 'server_error');
    expect(openai().requests).toHaveLength(5); // the first turn, then 1 + 3 retries of the second
    expect(executions).toHaveLength(1);

    openai().reset();
    openai().enqueue(answer);
    const resumed = await httpAgent(store, executions).resume('run_down').settled;
    expect(resumed).toMatchObject({ status: 'done', text: 'finished', iterations: 2 });
    expect(resumed.resumable).toBeUndefined();
    // Only the failed model call was made again: the tool was not, the first turn was not.
    expect(executions).toHaveLength(1);
    expect(rolesSent()).toEqual(['user,assistant,tool']);
    expect(resumed.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    // Tokens continue across the resume: both turns' usage (19 each, the server's default).
    expect(resumed.usage.totalTokens).toBe(38);
    expect(await store.getRun('run_down')).toMatchObject({ status: 'done' });
    expect((await store.getRun('run_down'))?.resumable).toBeUndefined();
    expect(store.readJournal('run_down').entries.filter((e) => e.event.type === 'run.resumed')).toHaveLength(1);
  });

  it('network down (every connection reset): failed and resumable, then resumed to the end', async () => {
    const store = createFileStore({ dir: tempDir() });
    openai().enqueue(...Array.from({ length: 4 }, () => reply.reset()));
    const failed = await httpAgent(store).start('say hi', { runId: 'run_offline' }).settled;
    await expectResumableFailure(store, failed, 'network');

    openai().reset();
    openai().enqueue(toolCall, answer);
    const resumed = await httpAgent(store).resume('run_offline').settled;
    expect(resumed).toMatchObject({ status: 'done', text: 'finished' });
    expect(rolesSent()).toEqual(['user', 'user,assistant,tool']);
  });

  it('wall-clock limit: failed with timeout, resumable, and resumed with a fresh budget', async () => {
    const store = createFileStore({ dir: tempDir() });
    const executions: string[] = [];
    // The second model call takes a minute; the run's budget is 300 ms.
    const slow = scriptedModel([{ toolCalls: [{ name: 'echo', arguments: { word: 'hi' } }] }, { text: 'late', delayMs: 60_000 }]);
    const first = createAgent({ id: 'agent_slow', model: slow, tools: [echoTool(executions)], persistence: { store }, limits: { timeoutMs: 300 } });
    agents.push(first);
    const failed = await first.start('say hi', { runId: 'run_slow' }).settled;
    expect(failed).toMatchObject({ status: 'failed', reason: 'timeout', resumable: true });
    expect(await store.getRun('run_slow')).toMatchObject({ status: 'failed', reason: 'timeout', resumable: true });

    const fast = scriptedModel([{ text: 'finished' }]);
    const second = createAgent({ id: 'agent_slow', model: fast, tools: [echoTool(executions)], persistence: { store } });
    agents.push(second);
    const resumed = await second.resume('run_slow').settled;
    expect(resumed).toMatchObject({ status: 'done', text: 'finished', iterations: 2 });
    expect(fast.calls).toHaveLength(1);
    expect(executions).toHaveLength(1);
    expect(resumed.messages.filter((m) => m.role === 'assistant')).toHaveLength(2);

    // The journal is an uninterrupted run's, with the timeout and the resume where they happened.
    const reference = createAgent({ model: scriptedModel([{ toolCalls: [{ name: 'echo', arguments: { word: 'hi' } }] }, { text: 'finished' }]), tools: [echoTool()] });
    agents.push(reference);
    const referenceTypes = (await reference.start('say hi').settled, reference.journal.entries().map((e) => e.event.type));
    const types = store.readJournal('run_slow').entries.map((e) => e.event.type);
    const resumedAt = types.indexOf('run.resumed');
    expect(types.slice(resumedAt - 1, resumedAt + 1)).toEqual(['run.terminated', 'run.resumed']);
    expect(types.filter((_, i) => i !== resumedAt && i !== resumedAt - 1)).toEqual(referenceTypes);
  });
});

describe('a run that ended by its own logic', () => {
  it('stays final: a bad request, an iteration limit and a final answer cannot be resumed', async () => {
    const store = createFileStore({ dir: tempDir() });
    openai().enqueue(reply.error(400, 'bad request'));
    const rejected = await httpAgent(store).start('say hi', { runId: 'run_bad' }).settled;
    expect(rejected).toMatchObject({ status: 'failed', reason: 'error', error: { code: 'bad_request' } });
    expect(rejected.resumable).toBeUndefined();

    const looping = createAgent({
      model: scriptedModel(() => ({ toolCalls: [{ name: 'echo', arguments: { word: 'again' } }] })),
      tools: [echoTool()],
      persistence: { store },
      limits: { maxIterations: 2 },
    });
    agents.push(looping);
    const limited = await looping.start('loop', { runId: 'run_limit' }).settled;
    expect(limited).toMatchObject({ status: 'failed', reason: 'max_iterations' });
    openai().enqueue(answer);
    const answered = await httpAgent(store).start('answer', { runId: 'run_answered' }).settled;
    expect(answered.status).toBe('done');

    for (const runId of ['run_bad', 'run_limit', 'run_answered']) {
      expect(() => httpAgent(store).resume(runId), runId).toThrow(expect.objectContaining({ code: 'run_finished' }));
      expect((await store.getRun(runId))?.resumable, runId).toBeUndefined();
    }
  });
});
