/**
 * A worker hears of new runs through graphile-worker's LISTEN, which its pool sends only after `run`
 * resolved, its workers having looked for jobs once already. Here that LISTEN is held on the server
 * (behind an advisory lock the test holds) until a run was queued after the workers' first look.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresRuntime, runWorker } from '../../src/postgres/index.ts';
import { engineOf } from '../../src/postgres/runtime.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { counterAgent } from './fixtures/agents.ts';

const missing = postgresMissing();
const GATE = 0x67_61_74_65;

/** Through `pool`'s connections: graphile-worker's LISTEN waits for the gate's lock first; `looked` counts its finished fetches of jobs. */
function gateListen(pool: pg.Pool): { looked: () => number } {
  let looked = 0;
  const patched = new WeakSet<pg.PoolClient>();
  pool.on('acquire', (client) => {
    if (patched.has(client)) return;
    patched.add(client);
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    const gated = (...args: unknown[]): unknown => {
      const [first, ...rest] = args;
      const text = typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '');
      if (text.includes('LISTEN "jobs:insert"')) return query(`SELECT pg_advisory_xact_lock_shared(${GATE}); ${text}`, ...rest);
      const result = query(...args);
      if (text.includes('locked_by') && result instanceof Promise) void result.then(() => looked++, () => undefined);
      return result;
    };
    client.query = gated as typeof client.query;
  });
  return { looked: () => looked };
}

const until = async (condition: () => Promise<boolean> | boolean): Promise<void> => {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 20));
};

describe.skipIf(missing !== '')('a worker that is starting', () => {
  it('takes a run queued before its LISTEN is in place at once, not at its next poll', { timeout: 90_000 }, async () => {
    const url = await freshDatabase('workerstart');
    const runtime = createPostgresRuntime({ connectionString: url, migrate: true, poolSize: 4 });
    await runtime.migrate();
    const agent = counterAgent(runtime, undefined, { calls: 0 });
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    await holder.query('SELECT pg_advisory_lock($1)', [GATE]);
    const gate = gateListen(engineOf(runtime).pool);
    // A poll far past the test's timeout: only the LISTEN, or a look for jobs once it is in place, brings the run.
    const starting = runWorker({ runtime, concurrency: 1, pollIntervalMs: 600_000 });
    const waitsAtGate = async () =>
      (await holder.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted`, [GATE])).rows[0]?.n === 1;
    let released = false;
    try {
      await until(async () => gate.looked() >= 1 && (await waitsAtGate()));
      const answer = agent.run('Record nothing.', { runId: 'run-worker-start' });
      // Queued (its job's notice sent, and heard by nobody) before the LISTEN goes through.
      await until(async () => (await runtime.getRun('run-worker-start')) !== null);
      await holder.query('SELECT pg_advisory_unlock($1)', [GATE]);
      released = true;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const poll = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('the run waited for the poll')), 30_000)));
      try {
        expect((await Promise.race([answer, poll])).text).toBe('recorded 0');
      } finally {
        clearTimeout(timer);
      }
    } finally {
      if (!released) await holder.query('SELECT pg_advisory_unlock($1)', [GATE]);
      await holder.end();
      await (await starting).stop();
      await runtime.close();
    }
  });
});
