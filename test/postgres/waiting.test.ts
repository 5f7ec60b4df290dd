/**
 * Runs that wait (here 20 000 of them, on a human) cost a new run nothing: no job stands for a
 * waiting run, and every statement a run's steps make finds its rows by key. Measured with the
 * server's own counts of rows read (pg_stat_user_tables), on a cluster of its own, with and
 * without the waiting runs in the database.
 */
import pg from 'pg';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, defineTool } from '../../src/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { createPostgresRuntime, runWorker, type DurableWorker, type PostgresRuntime } from '../../src/postgres/index.ts';
import { startCluster, type Cluster } from '../../scripts/postgresCluster.ts';
import { postgresMissing } from '../support/postgres.ts';
import { counterAgent, prepareEffectTables } from './fixtures/agents.ts';

const missing = postgresMissing();
const WAITING = 20_000;

describe.skipIf(missing !== '')('the PostgreSQL runtime with 20 000 runs waiting on a human', () => {
  let cluster: Cluster;
  let pool: pg.Pool;
  let runtime: PostgresRuntime;
  let worker: DurableWorker;

  beforeAll(async () => {
    const started = await startCluster({ maxConnections: 50 });
    if ('missing' in started) throw new Error(started.missing);
    cluster = started;
    pool = new pg.Pool({ connectionString: cluster.url, max: 2 });
    runtime = createPostgresRuntime({ connectionString: cluster.url, poolSize: 8 });
    await runtime.migrate();
    await prepareEffectTables(pool);
    worker = await runWorker({ runtime, concurrency: 4, pollIntervalMs: 200 });
  }, 60_000);
  afterAll(async () => {
    await worker?.stop();
    await runtime?.close();
    await pool?.end();
    cluster?.stop();
  });

  /** Rows read so far from the runtime's and graphile-worker's tables, once every server process has reported its counts. */
  const rowsRead = async (): Promise<number> => {
    const read = async () =>
      (
        await pool.query<{ n: number }>(
          `SELECT coalesce(sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)), 0)::float AS n FROM pg_stat_user_tables WHERE schemaname IN ('actorloop', 'graphile_worker')`,
        )
      ).rows[0]?.n ?? 0;
    // A server process reports its counts within a second or so of going idle: read until they settle.
    let last = await read();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const now = await read();
      if (now === last) return now;
      last = now;
    }
  };

  /** Rows the database read while three new runs went from start to end. */
  const measure = async (agent: ReturnType<typeof counterAgent>): Promise<number> => {
    const before = await rowsRead();
    const results = await Promise.all([1, 2, 3].map((i) => agent.run(`Record three numbers (${i}).`)));
    expect(results.map((result) => result.text)).toEqual(['recorded 3', 'recorded 3', 'recorded 3']);
    return (await rowsRead()) - before;
  };

  it('new runs finish, and the database reads no more rows for them than with no run waiting', { timeout: 180_000 }, async () => {
    const deploy = defineTool({ name: 'deploy', description: 'Deploy.', input: z.object({}), requiresConfirmation: true, execute: () => 'deployed' });
    const asker = createAgent({
      id: 'asker',
      model: scriptedModel((request) => (request.messages.some((message) => message.role === 'tool') ? { text: 'shipped' } : { toolCalls: [{ id: 'd1', name: 'deploy', arguments: {} }] }), {
        recordCalls: false,
      }),
      tools: [deploy],
      runtime,
    });
    const template = asker.run('Deploy it.', { runId: 'run_template' });
    await expect.poll(async () => (await runtime.getRun('run_template'))?.status, { timeout: 20_000 }).toBe('awaiting_human');
    const counter = counterAgent(runtime, pool, { calls: 3 });
    const without = await measure(counter);

    // The copying and counting below read every row: on one connection whose counts are reported now, before the measurement starts.
    const counting = await pool.connect();
    try {
      // The waiting run, copied: each copy a run of its own that the runtime would serve like the first.
      await counting.query(`
        INSERT INTO actorloop.actors (id, kind, agent_id, status, version, task, options, log_length)
        SELECT 'run_w' || i, kind, agent_id, status, version, task, options, log_length FROM actorloop.actors, generate_series(1, ${WAITING}) AS i WHERE id = 'run_template';
        INSERT INTO actorloop.log (actor_id, seq, line)
        SELECT 'run_w' || i, seq, replace(line, 'run_template', 'run_w' || i) FROM actorloop.log, generate_series(1, ${WAITING}) AS i WHERE actor_id = 'run_template';
        INSERT INTO actorloop.effects (actor_id, key, kind, status, request, outcome, finished_at)
        SELECT 'run_w' || i, replace(key, 'run_template', 'run_w' || i), kind, status, replace(request::text, 'run_template', 'run_w' || i)::jsonb, outcome, finished_at
        FROM actorloop.effects, generate_series(1, ${WAITING}) AS i WHERE actor_id = 'run_template';
        ANALYZE;`);
      const waiting = await counting.query<{ n: number }>("SELECT count(*)::int AS n FROM actorloop.actors WHERE status = 'awaiting_human'");
      expect(waiting.rows[0]?.n).toBe(WAITING + 1);
      // No job stands for a waiting run.
      const jobs = await counting.query<{ n: number }>('SELECT count(*)::int AS n FROM graphile_worker._private_jobs');
      expect(jobs.rows[0]?.n).toBe(0);
      await counting.query('SELECT pg_stat_force_next_flush()');
    } finally {
      counting.release();
    }

    const withWaiting = await measure(counter);
    // Background polls read a few rows more or less; one scan of the waiting runs would read 20 000.
    expect(withWaiting).toBeLessThan(without * 1.5 + 1_000);

    // The copies are real waiting runs: one of them goes on when approved, and so does the first.
    await runtime.approve(`run_w${WAITING}`);
    await expect.poll(async () => (await runtime.getRun(`run_w${WAITING}`))?.status, { timeout: 20_000 }).toBe('done');
    await runtime.approve('run_template');
    expect((await template).text).toBe('shipped');
  });
});
