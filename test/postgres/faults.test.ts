import pg from 'pg';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, defineTool } from '../../src/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { createPostgresRuntime, runWorker, type DurableWorker, type PostgresRuntime } from '../../src/postgres/index.ts';
import { engineOf } from '../../src/postgres/runtime.ts';
import { makeCall } from '../../src/postgres/effects.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';

const missing = postgresMissing();

/** A model that calls `tool` once, then answers. */
const callOnce = (tool: string) =>
  scriptedModel((request) => (request.messages.some((message) => message.role === 'tool') ? { text: 'done' } : { toolCalls: [{ id: 'c1', name: tool, arguments: {} }] }), {
    recordCalls: false,
  });

describe.skipIf(missing !== '')('the PostgreSQL runtime under faults', () => {
  let url: string;
  let pool: pg.Pool;
  let runtime: PostgresRuntime;
  let worker: DurableWorker | undefined;

  beforeAll(async () => {
    url = await freshDatabase('faults');
    pool = new pg.Pool({ connectionString: url, max: 2 });
  });
  afterAll(async () => {
    await worker?.stop();
    await runtime?.close();
    await pool?.end();
  });

  it('refuses a database it was not migrated to, saying how to migrate it', async () => {
    const unmigrated = createPostgresRuntime({ connectionString: url, poolSize: 2 });
    const agent = createAgent({ id: 'early', model: callOnce('none'), runtime: unmigrated });
    await expect(agent.run('Anything.')).rejects.toThrow(expect.objectContaining({ code: 'database_schema' }));
    await expect(agent.run('Anything.')).rejects.toThrow(/actorloop db migrate/);
    await unmigrated.close();
    runtime = createPostgresRuntime({ connectionString: url, poolSize: 8 });
    expect((await runtime.migrate()).applied).toHaveLength(4);
    expect((await runtime.migrate()).applied).toHaveLength(0);
  });

  it('a corrupt log row fails the run with a typed error naming the row, and leaves the row as it was', async () => {
    // A run that waits for a human is rebuilt from its log by the step that applies the decision.
    const hold = defineTool({ name: 'hold', description: 'Wait.', input: z.object({}), requiresConfirmation: true, execute: () => 'held' });
    const agent = createAgent({ id: 'holder', model: callOnce('hold'), tools: [hold], runtime });
    worker = await runWorker({ runtime, concurrency: 4, pollIntervalMs: 200 });
    const runId = 'run_corrupt';
    const running = agent.run('Hold on.', { runId });
    running.catch(() => undefined);
    await expect.poll(async () => (await runtime.getRun(runId))?.status, { timeout: 10_000 }).toBe('awaiting_human');
    await pool.query("UPDATE actorloop.log SET line = '{not json' WHERE actor_id = $1 AND seq = 1", [runId]);
    await runtime.approve(runId);
    const error = await running.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toMatchObject({ code: 'corrupt_row' });
    expect(error).toMatchObject({ code: 'corrupt_row', table: 'actorloop.log', row: `actor_id=${runId}, seq=1` });
    expect((error as Error).message).toContain('left untouched');
    await expect(runtime.journal(runId)).rejects.toThrow(expect.objectContaining({ code: 'corrupt_row' }));
    const row = await pool.query('SELECT line FROM actorloop.log WHERE actor_id = $1 AND seq = 1', [runId]);
    expect(row.rows[0]).toEqual({ line: '{not json' });
  });

  it('does not make again a call of a tool that is not idempotent when its worker died while making it', async () => {
    let made = 0;
    const charge = defineTool({ name: 'charge', description: 'Charge a card.', input: z.object({}), idempotent: false, execute: () => ++made });
    createAgent({ id: 'payer', model: callOnce('charge'), tools: [charge], runtime });
    const request = { kind: 'tool' as const, agentId: 'payer', tool: 'charge', input: {}, toolCallId: 'c1', idempotencyKey: 'run_payer:k', runId: 'run_payer' };
    // Claimed again after the worker that had begun it died.
    const { outcome } = await makeCall(engineOf(runtime), { key: 'k', request, begun: true }, new AbortController().signal, 'run_payer');
    expect(made).toBe(0);
    expect(outcome).toMatchObject({ ok: false, error: { message: expect.stringMatching(/not idempotent: it may already have taken effect/) } });
    // Claimed for the first time, it is made.
    expect((await makeCall(engineOf(runtime), { key: 'k', request, begun: false }, new AbortController().signal, 'run_payer')).outcome).toEqual({ ok: true, value: 1 });
  });

  it('a worker needs more connections than jobs at once', async () => {
    const small = createPostgresRuntime({ connectionString: url, poolSize: 3 });
    await expect(runWorker({ runtime: small, concurrency: 4 })).rejects.toThrow(/poolSize ≥ 6/);
    await small.close();
  });
  it('migrating a database whose log predates the last-entry column, a NUL escaped in a row included, keeps every row readable by a reader following a run', async () => {
    const agent = createAgent({ id: 'early_rows', model: callOnce('missing_tool'), runtime });
    const result = await agent.run('Anything.');
    const journal = await runtime.journal(result.runId);
    expect(journal.length).toBeGreaterThan(8);
    // A row whose JSON escapes a NUL: no jsonb cast may meet it.
    const rows = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM actorloop.log WHERE actor_id = $1', [result.runId]);
    const empty = `{"v":6,"kind":"journal","runId":"${result.runId}","agentId":"early_rows","at":0,"sequence":[],"elapsed":[],"iteration":[],"events":[],"note":"\\u0000"}`;
    await pool.query('INSERT INTO actorloop.log (actor_id, seq, line) VALUES ($1, $2, $3)', [result.runId, rows.rows[0]?.n, empty]);
    await pool.query('ALTER TABLE actorloop.log DROP COLUMN last_entry');
    // As it was before the blobs table too.
    await pool.query('DROP TRIGGER actors_drop_blobs ON actorloop.actors');
    await pool.query('DROP FUNCTION actorloop.drop_unnamed_blobs(); DROP TABLE actorloop.blobs; ALTER TABLE actorloop.actors DROP COLUMN blobs');
    await pool.query('DELETE FROM actorloop.schema_migrations WHERE version IN (3, 4)');
    expect((await runtime.migrate()).applied).toEqual([expect.stringMatching(/^3: /), expect.stringMatching(/^4: /)]);
    expect(await runtime.journal(result.runId, { after: 3 })).toEqual(journal.slice(4));
    expect(await runtime.journal(result.runId, { after: journal.length - 1 })).toEqual([]);
  });
});
