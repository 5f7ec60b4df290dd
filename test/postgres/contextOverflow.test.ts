/**
 * A durable run compacts on a full context window as an in-process one does: the worker that
 * made the model call records the provider's context-length error with its sizes, and the run's
 * next step hands the agent the typed error (real HTTP to a server answering with a recorded
 * provider body).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/index.ts';
import type { Message } from '../../src/core/messages.ts';
import { openAICompatible } from '../../src/inference/openaiCompatible.ts';
import { createPostgresRuntime, runWorker, type DurableWorker, type PostgresRuntime } from '../../src/postgres/index.ts';
import { startReplayServer, type ReplayServer, type RequestBody } from '../support/replayServer.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';

const missing = postgresMissing();
const WINDOW_CHARS = 12_000;
const sizeOf = (body: RequestBody): number => JSON.stringify(body.messages).length;

const history: Message[] = [
  { role: 'user', content: 'Read the report.' },
  { role: 'assistant', content: null, toolCalls: [{ id: 'call_old', name: 'weather', arguments: '{"location":"Oslo"}' }] },
  { role: 'tool', toolCallId: 'call_old', name: 'weather', content: `report: ${'rain and wind over the fjords. '.repeat(600)}` },
  { role: 'assistant', content: 'The report says it rains in Oslo.' },
];

describe.skipIf(missing !== '')('a durable run whose request is over the model context window', () => {
  let server: ReplayServer;
  let runtime: PostgresRuntime;
  let worker: DurableWorker;

  beforeAll(async () => {
    server = await startReplayServer({ rule: (body) => (sizeOf(body) > WINDOW_CHARS ? 'openai-context-length.json' : undefined) });
    runtime = createPostgresRuntime({ connectionString: await freshDatabase('overflow'), migrate: true, poolSize: 4 });
    worker = await runWorker({ runtime, concurrency: 2, pollIntervalMs: 100 });
  });
  afterAll(async () => {
    await worker?.stop();
    await runtime?.close();
    await server?.close();
  });

  it('is compacted once and sent again, and the run finishes', { timeout: 30_000 }, async () => {
    server.enqueue('openai-chat-text.json');
    const provider = openAICompatible({ baseURL: server.baseURL, apiKey: 'sk-test-replay-key', model: 'gpt-4o-mini', env: {}, timeoutMs: 10_000 });
    const agent = createAgent({ id: 'overflowing', model: { provider, stream: false }, runtime });

    const result = await agent.run('Plan a holiday.', { history, runId: 'run_durable_overflow' });

    expect(result.status).toBe('done');
    expect(server.served).toEqual(['openai-context-length.json', 'openai-chat-text.json']);
    expect(sizeOf(server.requests[1] as RequestBody)).toBeLessThan(WINDOW_CHARS);
    const overflowed = (await runtime.journal('run_durable_overflow')).flatMap((entry) => (entry.event.type === 'context.overflowed' ? [entry.event] : []));
    // The window the worker's call was told, carried to the step that compacted.
    expect(overflowed).toEqual([expect.objectContaining({ limitTokens: 4097 })]);
  });
});
