/**
 * A run's wake is a graphile-worker job keyed by the run, so a run has at most one waiting. A
 * worker may take that waiting wake while another transaction queues the next one (a branch that
 * ended, a human's decision): the wake taken may have read the run before that transaction
 * commits, so a new one must still be queued. Here the worker's fetch is played by a transaction
 * that locks the job, and the interleaving is driven by waiting for the queueing transaction to
 * block on that lock.
 */
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/postgres/migrations.ts';
import { post, settleEffect, wake } from '../../src/postgres/outbox.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';

const missing = postgresMissing();
const PARENT = 'run_parent';
const CHILD_KEY = 'child:run_parent-r1-b2';

describe.skipIf(missing !== '')('wakes queued while a worker takes the waiting one', () => {
  let pool: pg.Pool;

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: await freshDatabase('wakes'), max: 4 });
    // As the runtime's pool does: a dropped connection is not a crash (graphile-worker checks for these handlers).
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
    await migrate(pool);
  });
  afterAll(async () => {
    await pool?.end();
  });
  beforeEach(async () => {
    await pool.query('DELETE FROM graphile_worker._private_jobs');
    await pool.query('DELETE FROM actorloop.actors');
    await pool.query(`INSERT INTO actorloop.actors (id, kind, agent_id, status, task) VALUES ($1, 'strategy', 'vote3', 'running', 'Record one number.')`, [PARENT]);
    await pool.query(`INSERT INTO actorloop.effects (actor_id, key, kind, status, request) VALUES ($1, $2, 'child', 'pending', '{}')`, [PARENT, CHILD_KEY]);
  });

  /** The run's wake jobs: `waiting` are those no worker has taken yet. */
  const jobs = async (): Promise<{ waiting: number; taken: number }> => {
    const found = await pool.query<{ waiting: number; taken: number }>(
      `SELECT count(*) FILTER (WHERE locked_at IS NULL)::int AS waiting, count(*) FILTER (WHERE locked_at IS NOT NULL)::int AS taken
       FROM graphile_worker._private_jobs WHERE payload->>'actor' = $1`,
      [PARENT],
    );
    return found.rows[0] ?? { waiting: 0, taken: 0 };
  };

  /**
   * Queue a wake with `queue` in a transaction while a worker takes the waiting wake: the worker's
   * fetch holds the job's row when `queue` reaches it, and commits (the job is running) before
   * `queue` goes on.
   */
  const queueWhileTaken = async (queue: (client: pg.PoolClient) => Promise<unknown>): Promise<void> => {
    await wake(pool, [PARENT]);
    expect(await jobs()).toEqual({ waiting: 1, taken: 0 });
    const fetcher = await pool.connect();
    const queuer = await pool.connect();
    try {
      await fetcher.query('BEGIN');
      await fetcher.query(`UPDATE graphile_worker._private_jobs SET locked_at = now(), locked_by = 'test_worker', attempts = attempts + 1 WHERE payload->>'actor' = $1`, [PARENT]);
      const pid = (await queuer.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      await queuer.query('BEGIN');
      const queued = queue(queuer);
      queued.catch(() => undefined);
      // The queueing transaction is waiting for the job's row, which the fetch holds.
      await expect
        .poll(async () => (await pool.query<{ wait: string | null }>('SELECT wait_event_type AS wait FROM pg_stat_activity WHERE pid = $1', [pid])).rows[0]?.wait, { timeout: 10_000 })
        .toBe('Lock');
      await fetcher.query('COMMIT');
      await queued;
      await queuer.query('COMMIT');
    } finally {
      // Closed, not pooled: a transaction a failed expectation left open must not hold the job's row.
      fetcher.release(true);
      queuer.release(true);
    }
  };

  it('a branch that ends while a worker takes its parent\'s waiting wake queues another for its parent', async () => {
    await queueWhileTaken((client) => settleEffect(client, PARENT, CHILD_KEY, { ok: true, value: { status: 'done' } }));
    const effect = await pool.query<{ status: string }>('SELECT status FROM actorloop.effects WHERE actor_id = $1 AND key = $2', [PARENT, CHILD_KEY]);
    expect(effect.rows[0]?.status).toBe('done');
    // The wake taken may have stepped the parent before the branch's end committed: a new one waits.
    expect(await jobs()).toEqual({ waiting: 1, taken: 1 });
  });

  it('a human\'s decision posted while a worker takes the run\'s waiting wake queues another', async () => {
    await pool.query(`UPDATE actorloop.actors SET status = 'awaiting_human' WHERE id = $1`, [PARENT]);
    await queueWhileTaken((client) => post(client, [PARENT], { decision: { approve: true } }, `status = 'awaiting_human'`));
    expect(await jobs()).toEqual({ waiting: 1, taken: 1 });
  });

  it('wakes of a run no worker has taken yet stay one waiting job', async () => {
    await wake(pool, [PARENT]);
    await settleEffect(pool, PARENT, CHILD_KEY, { ok: true, value: { status: 'done' } });
    await wake(pool, [PARENT, PARENT]);
    expect(await jobs()).toEqual({ waiting: 1, taken: 0 });
  });
});
