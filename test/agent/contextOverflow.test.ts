/**
 * Compaction when the model says the context is full, against a local OpenAI-compatible server
 * on 127.0.0.1 that answers a request over its window with a real provider's context-length
 * error (test/fixtures/wire) and a request under it with a recorded reply.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/agent/createAgent.ts';
import type { JournalEntry, LoopEvent } from '../../src/core/loopEvent.ts';
import type { Message } from '../../src/core/messages.ts';
import type { LoopResult } from '../../src/core/run.ts';
import { ContextLengthError } from '../../src/inference/errors.ts';
import { openAICompatible } from '../../src/inference/openaiCompatible.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { createFileStore, type RunStore } from '../../src/persistence/fileStore.ts';
import { META_VERSION } from '../../src/persistence/records.ts';
import { readRunHeader } from '../../src/persistence/runLog.ts';
import { removeTempDirs, runFiles, tempDir } from '../persistence/support.ts';
import { startReplayServer, type ReplayServer, type RequestBody } from '../support/replayServer.ts';

/** The server's window, in characters of the request's messages. */
const WINDOW_CHARS = 12_000;
const sizeOf = (body: RequestBody): number => JSON.stringify(body.messages).length;

let server: ReplayServer;
/** When set, every request gets this fixture whatever its size. */
let always: string | undefined;
beforeEach(async () => {
  always = undefined;
  server = await startReplayServer({
    rule: (body) => always ?? (sizeOf(body) > WINDOW_CHARS ? 'openai-context-length.json' : undefined),
  });
});
afterEach(async () => {
  await server.close();
  removeTempDirs();
});

/** An earlier session whose tool result alone is over the window. */
const history: Message[] = [
  { role: 'user', content: 'Read the report.' },
  { role: 'assistant', content: null, toolCalls: [{ id: 'call_old', name: 'weather', arguments: '{"location":"Oslo"}' }] },
  { role: 'tool', toolCallId: 'call_old', name: 'weather', content: `report: ${'rain and wind over the fjords. '.repeat(600)}` },
  { role: 'assistant', content: 'The report says it rains in Oslo.' },
];

function overflowAgent(context?: { compactOnOverflow?: boolean }, store?: RunStore) {
  const weather = defineTool({
    name: 'weather',
    description: 'The weather at a location',
    input: z.object({ location: z.string() }),
    execute: ({ location }) => ({ location, sky: 'sunny', celsius: 18 }),
  });
  const agent = createAgent({
    model: { provider: openAICompatible({ baseURL: server.baseURL, apiKey: 'sk-test-replay-key', model: 'gpt-4o-mini', env: {}, timeoutMs: 10_000 }), stream: false },
    tools: [weather],
    ...(context === undefined ? {} : { context }),
    ...(store === undefined ? {} : { persistence: { store } }),
  });
  const events: LoopEvent[] = [];
  agent.events$.subscribe((entry: JournalEntry) => events.push(entry.event));
  return { agent, events };
}

async function rejection(promise: Promise<LoopResult>): Promise<Error & { result: LoopResult }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { result: LoopResult };
  }
  throw new Error('expected the run to fail');
}

const overflows = (events: readonly LoopEvent[]) => events.filter((event): event is Extract<LoopEvent, { type: 'context.overflowed' }> => event.type === 'context.overflowed');

describe('compaction when the model says the context is full (real HTTP, recorded provider errors)', () => {
  it('compacts the request under the reported window, sends it once more, and the run succeeds', async () => {
    server.enqueue('openai-chat-text.json');
    const { agent, events } = overflowAgent();
    const result = await agent.run('Plan a holiday.', { history });
    agent.stop();

    expect(result.status).toBe('done');
    expect(server.served).toEqual(['openai-context-length.json', 'openai-chat-text.json']);
    const [first, second] = server.requests.map(sizeOf);
    expect(second).toBeLessThan(WINDOW_CHARS);
    expect(second).toBeLessThan(first as number);
    const [event] = overflows(events);
    expect(overflows(events)).toHaveLength(1);
    // The window the recorded error reports, and a target under it in the estimate's tokens.
    expect(event).toMatchObject({ limitTokens: 4097, reason: expect.stringContaining('maximum context length is 4097 tokens') });
    expect(event?.tokensAfter).toBeLessThanOrEqual(event?.targetTokens ?? 0);
    expect(event?.targetTokens).toBeLessThan(event?.tokensBefore ?? 0);
    // The stored conversation is whole: only the request was compacted.
    expect(result.messages.some((m) => m.role === 'tool' && m.content.startsWith('report: '))).toBe(true);
  });

  it('keeps later requests of the run under the learned limit: one overflow, not one per iteration', async () => {
    server.enqueue('mistral-tool-call.json', 'openai-chat-text.json');
    const { agent, events } = overflowAgent();
    const result = await agent.run('Weather in San Francisco?', { history });
    agent.stop();

    expect(result.status).toBe('done');
    // The second model call (after the tool) went out compacted at once.
    expect(server.served).toEqual(['openai-context-length.json', 'mistral-tool-call.json', 'openai-chat-text.json']);
    expect(sizeOf(server.requests[2] as RequestBody)).toBeLessThan(WINDOW_CHARS);
    expect(overflows(events)).toHaveLength(1);
  });

  it('fails with ContextLengthError when the compacted request overflows too', async () => {
    always = 'vllm-context-length-nested.json';
    const { agent, events } = overflowAgent();
    const error = await rejection(agent.run('Plan a holiday.', { history }));
    agent.stop();

    expect(error).toBeInstanceOf(ContextLengthError);
    expect(error.result.reason).toBe('error');
    // Tried once more, compacted, and no more.
    expect(server.requests).toHaveLength(2);
    expect(sizeOf(server.requests[1] as RequestBody)).toBeLessThan(sizeOf(server.requests[0] as RequestBody));
    expect(overflows(events)).toHaveLength(1);
  });

  it('fails at once with compactOnOverflow: false', async () => {
    const { agent, events } = overflowAgent({ compactOnOverflow: false });
    const error = await rejection(agent.run('Plan a holiday.', { history }));
    agent.stop();

    expect(error).toBeInstanceOf(ContextLengthError);
    expect(server.requests).toHaveLength(1);
    expect(overflows(events)).toHaveLength(0);
  });

  it('keeps the learned limit in a resumed run: the replayed reply carries it, the next live request fits at once', async () => {
    server.enqueue('mistral-tool-call.json', 'openai-chat-text.json');
    const first = createFileStore({ dir: tempDir() });
    const { agent } = overflowAgent(undefined, first);
    const done = await agent.run('Weather in San Francisco?', { history, runId: 'run_overflow' });
    agent.stop();
    expect(done.status).toBe('done');

    // The same run as a crash right after the gate decided leaves it: the model's first reply is recorded, no tool has run.
    const lines = readFileSync(runFiles(first, 'run_overflow').log, 'utf8').split(/(?<=\n)/);
    const cut = lines.findIndex((line) => line.includes('"kind":"gate"')) + 1;
    expect(cut).toBeGreaterThan(0);
    const store = createFileStore({ dir: tempDir() });
    const target = runFiles(store, 'run_overflow');
    mkdirSync(target.runs, { recursive: true });
    writeFileSync(target.log, lines.slice(0, cut).join(''));
    const header = readRunHeader(target.log);
    if (header === null) throw new Error('the run has no header');
    writeFileSync(target.meta, JSON.stringify({ v: META_VERSION, runId: header.runId, agentId: header.agentId, task: header.task, status: 'running', createdAt: header.createdAt, updatedAt: header.createdAt }));

    const servedBefore = server.served.length;
    server.enqueue('openai-chat-text.json');
    const { agent: again, events } = overflowAgent(undefined, store);
    const resumed = await again.resume('run_overflow').settled;
    again.stop();
    expect(resumed.status).toBe('done');
    // Only the model call after the tool was made, under the limit the first process learned.
    expect(server.served.slice(servedBefore)).toEqual(['openai-chat-text.json']);
    expect(sizeOf(server.requests.at(-1) as RequestBody)).toBeLessThan(WINDOW_CHARS);
    expect(overflows(events)).toHaveLength(0);
  });
});
