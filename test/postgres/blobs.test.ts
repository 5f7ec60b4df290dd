/**
 * Images and files on durable agents: their bytes go to `actorloop.blobs` (once per content hash) in
 * the transaction that queues the run or records the call that returned them; rows carry only
 * references, and whichever worker steps the run sends the bytes to the model over HTTP.
 */
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, file, image, openAICompatible, type Message } from '../../src/index.ts';
import { everythingStdio } from '../mcp/support.ts';
import { DurableRunError } from '../../src/errors.ts';
import { createPostgresRuntime, runWorker, type PostgresRuntime } from '../../src/postgres/index.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { reply, useOpenAIServer, type RecordedRequest } from '../support/openaiServer.ts';
import { inProcess, noisyPng, SNAPSHOT_PNG, visionAgent, type InProcess } from './fixtures/agents.ts';
import { startWorker, stop } from './workerProcess.ts';
import { createAiSdkHandler } from '../../src/web/aiSdk.ts';
import { post, serve } from '../web/support.ts';

const missing = postgresMissing();
const openai = useOpenAIServer();

const b64 = (bytes: Buffer): string => bytes.toString('base64');
/** A stretch from the middle of the bytes' base64: found in any inline copy of them. */
const slice = (bytes: Buffer): string => b64(bytes).slice(400, 600);
const body = (request: RecordedRequest | undefined): string => JSON.stringify(request?.body ?? null);
const dataUrl = (bytes: Buffer): string => `data:image/png;base64,${b64(bytes)}`;

/** Every row a run wrote, as text: its row, its log, its calls. */
async function storedText(pool: pg.Pool, runId: string): Promise<string> {
  const rows = await pool.query<{ text: string }>(
    `SELECT concat_ws(' ', (SELECT row_to_json(a)::text FROM actorloop.actors a WHERE id = $1),
       (SELECT string_agg(line, ' ') FROM actorloop.log WHERE actor_id = $1),
       (SELECT string_agg(request::text || ' ' || coalesce(outcome::text, ''), ' ') FROM actorloop.effects WHERE actor_id = $1)) AS text`,
    [runId],
  );
  return rows.rows[0]?.text ?? '';
}

const blobCount = async (pool: pg.Pool): Promise<number> => (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM actorloop.blobs')).rows[0]?.n ?? -1;

describe.skipIf(missing !== '')('images and files on a durable agent, one process', () => {
  let setup: InProcess | undefined;

  beforeAll(async () => {
    setup = await inProcess(await freshDatabase('blobs'), 4);
  });
  afterAll(async () => {
    await setup?.close();
  });

  it('sends the task\'s image and the history\'s image, file and tool image to the model, stores each once, and keeps the bytes out of every row', async () => {
    const { runtime, pool } = setup as InProcess;
    const agent = visionAgent(runtime, openai().baseURL);
    const photo = noisyPng(1);
    const earlier = noisyPng(2);
    const shown = noisyPng(3);
    const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), noisyPng(4, 5_000)]);
    const history: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'Keep these.' }, image(earlier), file(pdf, { filename: 'notes.pdf' })] },
      { role: 'assistant', content: '', toolCalls: [{ id: 't0', name: 'snapshot', arguments: '{}' }] },
      { role: 'tool', toolCallId: 't0', content: 'snapshot taken', parts: [image(shown)] },
      { role: 'assistant', content: 'Kept.' },
    ];
    openai().enqueue(reply.completion({ textPieces: ['A cat.'] }), reply.completion({ textPieces: ['The same cat.'] }));
    const first = await agent.run(['What is in this picture?', image(photo)], { history });
    expect(first.text).toBe('A cat.');
    const sent = body(openai().requests[0]);
    for (const bytes of [photo, earlier, shown, pdf]) expect(sent).toContain(b64(bytes));
    expect(await blobCount(pool)).toBe(4);

    // The same image again, in another run: stored once, named by both runs.
    const second = await agent.run(['And this one?', image(photo)]);
    expect(second.text).toBe('The same cat.');
    expect(body(openai().requests[1])).toContain(dataUrl(photo));
    expect(await blobCount(pool)).toBe(4);
    const named = await pool.query<{ id: string; n: number }>('SELECT id, cardinality(blobs) AS n FROM actorloop.actors WHERE id = ANY($1) ORDER BY created_at', [[first.runId, second.runId]]);
    expect(named.rows.map((row) => row.n)).toEqual([4, 1]);

    // A later turn carries the first run's conversation, its parts by reference: the bytes are not sent again, the model gets them.
    openai().enqueue(reply.completion({ textPieces: ['Still a cat.'] }));
    const later = await agent.run('Still there?', { history: first.messages.filter((message) => message.role !== 'system') });
    expect(later.text).toBe('Still a cat.');
    for (const bytes of [photo, earlier, shown, pdf]) expect(body(openai().requests[2])).toContain(b64(bytes));
    expect(await blobCount(pool)).toBe(4);

    for (const runId of [first.runId, second.runId, later.runId]) {
      const text = await storedText(pool, runId);
      expect(text).toContain('sha256-');
      for (const bytes of [photo, earlier, shown, pdf]) expect(text).not.toContain(slice(bytes));
    }
  }, 30_000);

  it('a blob goes with the last run that names it, not before', async () => {
    const { runtime, pool } = setup as InProcess;
    const agent = visionAgent(runtime, openai().baseURL, { id: 'keeper' });
    const shared = noisyPng(10);
    const own = noisyPng(11);
    openai().enqueue(reply.completion({ textPieces: ['one'] }), reply.completion({ textPieces: ['two'] }));
    const a = await agent.run(['first', image(shared), image(own)]);
    const b = await agent.run(['second', image(shared)]);
    const refs = async (): Promise<string[]> => (await pool.query<{ ref: string }>('SELECT ref FROM actorloop.blobs ORDER BY ref')).rows.map((row) => row.ref);
    const [sharedRef, ownRef] = await Promise.all(
      [shared, own].map(async (bytes) => (await pool.query<{ ref: string }>("SELECT ref FROM actorloop.blobs WHERE data = $1", [bytes])).rows[0]?.ref),
    );
    expect(sharedRef).toMatch(/^sha256-[0-9a-f]{64}$/);
    expect(await refs()).toEqual(expect.arrayContaining([sharedRef, ownRef]));
    await pool.query('DELETE FROM actorloop.actors WHERE id = $1', [a.runId]);
    expect(await refs()).toContain(sharedRef);
    expect(await refs()).not.toContain(ownRef);
    await pool.query('DELETE FROM actorloop.actors WHERE id = $1', [b.runId]);
    expect(await refs()).not.toContain(sharedRef);
  }, 30_000);

  it('the AI SDK handler gives a durable agent the chat\'s image and PDF (data: URLs), stored like a task\'s', async () => {
    const { runtime, pool } = setup as InProcess;
    const agent = visionAgent(runtime, openai().baseURL, { id: 'chatter' });
    const served = await serve(createAiSdkHandler(agent, { runtime, pollIntervalMs: 100 }));
    try {
      const photo = noisyPng(50);
      const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), noisyPng(51, 5_000)]);
      openai().enqueue(reply.completion({ textPieces: ['A picture and a report.'] }));
      const response = await post(served.url, {
        id: 'chat-1',
        trigger: 'submit-message',
        messages: [
          {
            id: 'u1',
            role: 'user',
            parts: [
              { type: 'text', text: 'What are these?' },
              { type: 'file', mediaType: 'image/png', url: dataUrl(photo) },
              { type: 'file', mediaType: 'application/pdf', filename: 'report.pdf', url: `data:application/pdf;base64,${b64(pdf)}` },
            ],
          },
        ],
      });
      expect(response.status).toBe(200);
      const streamed = await response.text();
      expect(streamed).toContain('A picture and a report.');
      const sent = body(openai().requests[0]);
      expect(sent).toContain(dataUrl(photo));
      expect(sent).toContain(b64(pdf));
      const runs = await pool.query<{ id: string }>("SELECT id FROM actorloop.actors WHERE agent_id = 'chatter'");
      expect(runs.rows).toHaveLength(1);
      const text = await storedText(pool, runs.rows[0]?.id ?? '');
      for (const bytes of [photo, pdf]) expect(text).not.toContain(slice(bytes));
    } finally {
      await served.close();
    }
  }, 30_000);

  it('an image an MCP tool returns reaches the model in the next step, its bytes stored once with the step that records the call', async () => {
    const { runtime, pool } = setup as InProcess;
    const provider = openAICompatible({ baseURL: openai().baseURL, apiKey: 'test', model: 'gpt-4o-mini', env: {}, timeoutMs: 10_000, retry: { maxRetries: 0 } });
    const agent = createAgent({ id: 'mcp_looker', model: { provider, vision: true }, mcpServers: [everythingStdio], runtime });
    try {
      openai().enqueue(reply.completion({ toolCalls: [{ id: 'call_img', name: 'everything_get-tiny-image', argumentPieces: ['{}'] }] }), reply.completion({ textPieces: ['A tiny image.'] }));
      const before = await blobCount(pool);
      const result = await agent.run('Show me the tiny image');
      expect(result.text).toBe('A tiny image.');
      expect(body(openai().requests[1])).toMatch(/data:image\/png;base64,[A-Za-z0-9+/]{100,}={0,2}"/);
      expect(await blobCount(pool)).toBe(before + 1);
      const outcome = await pool.query<{ outcome: { images?: { ref?: string; data?: string }[] } }>("SELECT outcome FROM actorloop.effects WHERE actor_id = $1 AND kind = 'tool'", [result.runId]);
      expect(outcome.rows[0]?.outcome.images).toEqual([expect.objectContaining({ ref: expect.stringMatching(/^sha256-/) })]);
      expect(await storedText(pool, result.runId)).not.toMatch(/[A-Za-z0-9+/]{200,}/);
    } finally {
      await agent.close();
    }
  }, 60_000);

  it('refuses a history whose image reference has no bytes in the database with DurableRunError (missing_blob), queueing nothing', async () => {
    const { runtime, pool } = setup as InProcess;
    const agent = visionAgent(runtime, openai().baseURL, { id: 'forgetful' });
    const ref = `sha256-${'0'.repeat(64)}`;
    const history: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'Look:' }, { type: 'image', ref, bytes: 100, mediaType: 'image/png' }] }];
    const error = await agent.run('What was it?', { history }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DurableRunError);
    expect(error).toMatchObject({ code: 'missing_blob', row: `ref=${ref}` });
    const runs = await pool.query("SELECT 1 FROM actorloop.actors WHERE agent_id = 'forgetful'");
    expect(runs.rows).toHaveLength(0);
    expect(openai().requests).toHaveLength(0);
  });

  it('refuses an image over the content limit before anything is queued, as in process', async () => {
    const { runtime, pool } = setup as InProcess;
    const agent = visionAgent(runtime, openai().baseURL, { id: 'small', maxImageBytes: 1_000 });
    const before = (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM actorloop.actors')).rows[0]?.n;
    const error = await agent.run(['Too big', image(noisyPng(20, 5_000))]).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'ConversationError', problem: 'too_large' });
    const after = (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM actorloop.actors')).rows[0]?.n;
    expect(after).toBe(before);
    expect(openai().requests).toHaveLength(0);
  });
});

describe.skipIf(missing !== '')('images on a durable agent across worker processes', () => {
  let url: string;
  let pool: pg.Pool;
  let runtime: PostgresRuntime;
  const workers: ChildProcess[] = [];
  /** The agent the worker processes serve too. */
  let agent: ReturnType<typeof visionAgent>;

  beforeAll(async () => {
    url = await freshDatabase('blobs_workers');
    pool = new pg.Pool({ connectionString: url, max: 3 });
    runtime = createPostgresRuntime({ connectionString: url, migrate: true, poolSize: 6 });
    await runtime.migrate();
    agent = visionAgent(runtime, openai().baseURL);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map(stop));
  });
  afterAll(async () => {
    await runtime?.close();
    await pool?.end();
  });

  it('the task\'s image reaches the model from another process\'s worker, and a tool\'s image from a third worker after the second stopped', async () => {
    const photo = noisyPng(30);
    openai().enqueue(
      reply.completion({ toolCalls: [{ id: 's1', name: 'snapshot', argumentPieces: ['{}'] }] }),
      // The first worker is stopped while this call waits: the next worker makes it again.
      reply.slow(60_000, reply.completion({ textPieces: ['never sent'] })),
      reply.completion({ textPieces: ['A cat, and the screen.'] }),
    );
    const first = await startWorker(url, { openaiBaseURL: openai().baseURL, concurrency: 2 });
    workers.push(first);
    const run = agent.start(['What is in this picture?', image(photo)]);
    await expect.poll(() => openai().requests.length, { timeout: 30_000, interval: 50 }).toBe(2);
    expect(body(openai().requests[0])).toContain(dataUrl(photo));
    await stop(first);
    workers.push(await startWorker(url, { openaiBaseURL: openai().baseURL, concurrency: 2 }));
    const result = await run.result;
    expect(result.text).toBe('A cat, and the screen.');
    expect(openai().requests).toHaveLength(3);
    const last = body(openai().requests[2]);
    expect(last).toContain(dataUrl(photo));
    expect(last).toContain(dataUrl(SNAPSHOT_PNG));
    const steps = await pool.query<{ worker: string }>('SELECT worker FROM actorloop.steps WHERE actor_id = $1 ORDER BY version', [result.runId]);
    expect(new Set(steps.rows.map((row) => row.worker)).size).toBe(2);
    expect(await blobCount(pool)).toBe(2);
    const text = await storedText(pool, result.runId);
    for (const bytes of [photo, SNAPSHOT_PNG]) expect(text).not.toContain(slice(bytes));
  }, 90_000);

  it('a run whose image bytes are gone fails with DurableRunError (missing_blob) naming the row, and makes no model call', async () => {
    const run = agent.start(['Describe', image(noisyPng(40))]);
    await expect.poll(async () => (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM actorloop.actors WHERE id = $1', [run.runId])).rows[0]?.n, { timeout: 10_000 }).toBe(1);
    const gone = await pool.query<{ ref: string }>('DELETE FROM actorloop.blobs WHERE ref = ANY((SELECT blobs FROM actorloop.actors WHERE id = $1)::text[]) RETURNING ref', [run.runId]);
    expect(gone.rows).toHaveLength(1);
    const worker = await runWorker({ runtime, concurrency: 2, pollIntervalMs: 200 });
    try {
      const error = await run.result.catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DurableRunError);
      expect(error).toMatchObject({ code: 'missing_blob', table: 'actorloop.blobs', row: `ref=${gone.rows[0]?.ref}` });
      expect((error as Error).message).toContain(run.runId);
      expect(openai().requests).toHaveLength(0);
    } finally {
      await worker.stop();
    }
  }, 30_000);
});
