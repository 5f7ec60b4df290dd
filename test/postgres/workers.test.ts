import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPostgresRuntime, type PostgresRuntime } from '../../src/postgres/index.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { counterAgent, prepareEffectTables, voteStrategy } from './fixtures/agents.ts';
import { startWorker, stop } from './workerProcess.ts';
import type { JournalEntry } from '../../src/index.ts';

const missing = postgresMissing();

describe.skipIf(missing !== '')('the PostgreSQL runtime across worker processes', () => {
  let url: string;
  let pool: pg.Pool;
  let runtime: PostgresRuntime;
  const workers: ChildProcess[] = [];

  beforeEach(async () => {
    url = await freshDatabase('workers');
    pool = new pg.Pool({ connectionString: url, max: 4 });
    runtime = createPostgresRuntime({ connectionString: url, migrate: true, poolSize: 4 });
    await runtime.migrate();
    await prepareEffectTables(pool);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map(stop));
    await runtime.close();
    await pool.end();
  });
  afterAll(async () => {
    await Promise.all(workers.map(stop));
  });

  it('200 agent runs, 150 of them branches of 50 strategy runs, across two workers: all finish, each event is applied once, one run never has two steps at once', async () => {
    const options = { calls: 2, modelDelayMs: 5 };
    const agent = counterAgent(runtime, pool, options);
    const vote = voteStrategy(runtime, agent);
    const seen: JournalEntry[] = [];
    const subscription = agent.events$.subscribe((entry) => seen.push(entry));
    workers.push(await startWorker(url, { ...options, concurrency: 8 }), await startWorker(url, { ...options, concurrency: 8 }));
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? agent.run(`Record two numbers (${i}).`) : vote.run(`Record two numbers (${i}).`))),
    );
    expect(results.every((result) => result.status === 'done' && result.text === 'recorded 2')).toBe(true);
    const effects = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM test_effects');
    expect(effects.rows[0]?.n).toBe(400);
    const executions = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM test_executions');
    expect(executions.rows[0]?.n).toBe(400);
    // The events of every run reached this process, which ran none of them.
    await expect.poll(() => seen.filter((entry) => entry.event.type === 'run.terminated').length, { timeout: 10_000 }).toBe(200);
    subscription.unsubscribe();

    const steps = await pool.query<{ actor_id: string; version: string; worker: string; started_at: Date; applied_at: Date }>(
      'SELECT actor_id, version, worker, started_at, applied_at FROM actorloop.steps ORDER BY actor_id, version',
    );
    const byActor = new Map<string, (typeof steps.rows)[number][]>();
    for (const row of steps.rows) byActor.set(row.actor_id, [...(byActor.get(row.actor_id) ?? []), row]);
    expect(byActor.size).toBe(250);
    const kinds = await pool.query<{ kind: string; status: string; n: number }>('SELECT kind, status, count(*)::int AS n FROM actorloop.actors GROUP BY kind, status ORDER BY kind');
    expect(kinds.rows).toEqual([
      { kind: 'agent', status: 'done', n: 200 },
      { kind: 'strategy', status: 'done', n: 50 },
    ]);
    for (const rows of byActor.values()) {
      expect(rows.map((row) => Number(row.version))).toEqual(rows.map((_, i) => i + 1));
      for (let i = 1; i < rows.length; i++) expect(rows[i]!.started_at.getTime()).toBeGreaterThanOrEqual(rows[i - 1]!.applied_at.getTime());
    }
    expect(new Set(steps.rows.map((row) => row.worker)).size).toBe(2);
  }, 120_000);

  it('a worker killed mid-run: the other finishes every run, and each tool effect is made exactly once', async () => {
    const options = { calls: 3, toolDelayMs: 300 };
    const agent = counterAgent(runtime, pool, options);
    const doomed = await startWorker(url, { ...options, concurrency: 6 });
    workers.push(doomed, await startWorker(url, { ...options, concurrency: 6 }));
    const runs = Promise.all(Array.from({ length: 30 }, (_, i) => agent.run(`Record three numbers (${i}).`)));
    await expect.poll(async () => (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM test_executions WHERE pid = $1', [doomed.pid])).rows[0]?.n ?? 0, {
      timeout: 30_000,
      interval: 50,
    }).toBeGreaterThanOrEqual(6);
    doomed.kill('SIGKILL');
    const results = await runs;
    expect(results.every((result) => result.status === 'done' && result.text === 'recorded 3')).toBe(true);
    const effects = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM test_effects');
    expect(effects.rows[0]?.n).toBe(90);
    const models = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM actorloop.effects WHERE kind = 'model'");
    expect(models.rows[0]?.n).toBe(120);
    for (const result of results) {
      const journal = await runtime.journal(result.runId);
      expect(journal.filter((entry) => entry.event.type === 'tool.finished')).toHaveLength(3);
      expect(journal.filter((entry) => entry.event.type === 'run.terminated')).toHaveLength(1);
    }
    // The calls the killed worker had in hand were made again by the other: more executions than effects.
    const executions = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM test_executions');
    expect(executions.rows[0]?.n).toBeGreaterThan(90);
  }, 120_000);
});
