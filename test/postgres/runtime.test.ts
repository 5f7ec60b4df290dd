import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresRuntime, runWorker, type DurableWorker, type PostgresRuntime } from '../../src/postgres/index.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { counterAgent, prepareEffectTables } from './fixtures/agents.ts';

const missing = postgresMissing();
if (missing !== '') console.info(missing);

describe.skipIf(missing !== '')('the PostgreSQL runtime, in one process', () => {
  let url: string;
  let pool: pg.Pool;
  let runtime: PostgresRuntime;
  let worker: DurableWorker;

  beforeAll(async () => {
    url = await freshDatabase('runtime');
    pool = new pg.Pool({ connectionString: url, max: 4 });
    runtime = createPostgresRuntime({ connectionString: url, migrate: true });
    await runtime.migrate();
    await prepareEffectTables(pool);
  });
  afterAll(async () => {
    await worker?.stop();
    await runtime?.close();
    await pool?.end();
  });

  it('runs an agent to its answer: every model and tool call is a job of its own, made once', async () => {
    const agent = counterAgent(runtime, pool, { calls: 3 });
    worker = await runWorker({ runtime, concurrency: 4, pollIntervalMs: 200 });
    const result = await agent.run('Record three numbers.');
    expect(result.status).toBe('done');
    expect(result.text).toBe('recorded 3');
    const effects = await pool.query<{ kind: string; n: string }>("SELECT kind, count(*) AS n FROM actorloop.effects WHERE actor_id = $1 GROUP BY kind ORDER BY kind", [result.runId]);
    expect(effects.rows).toEqual([{ kind: 'model', n: '4' }, { kind: 'tool', n: '3' }]);
    const executions = await pool.query('SELECT count(*)::int AS n FROM test_executions');
    expect(executions.rows[0]).toEqual({ n: 3 });
    const journal = await runtime.journal(result.runId);
    expect(journal.filter((entry) => entry.event.type === 'run.terminated')).toHaveLength(1);
    expect(journal.filter((entry) => entry.event.type === 'tool.finished')).toHaveLength(3);
  });
});
