/**
 * The database restarts under load, as after a crash or a failover: `pg_ctl stop -m immediate`,
 * then start, while worker processes are in the middle of 20 runs. On a cluster of its own, so
 * the other test files' databases stay up.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresRuntime, type PostgresRuntime } from '../../src/postgres/index.ts';
import { startCluster, type Cluster } from '../../scripts/postgresCluster.ts';
import { postgresMissing } from '../support/postgres.ts';
import { counterAgent } from './fixtures/agents.ts';
import { startWorker, stop } from './workerProcess.ts';

const missing = postgresMissing();

describe.skipIf(missing !== '')('the PostgreSQL runtime through a database restart', () => {
  let cluster: Cluster;
  let runtime: PostgresRuntime;
  let effectsDir: string;
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    const started = await startCluster({ maxConnections: 100 });
    if ('missing' in started) throw new Error(started.missing);
    cluster = started;
    effectsDir = mkdtempSync(join(tmpdir(), 'actorloop-restart-'));
    runtime = createPostgresRuntime({ connectionString: cluster.url, poolSize: 4 });
    await runtime.migrate();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(workers.splice(0).map(stop));
    await runtime?.close();
    cluster?.stop();
    rmSync(effectsDir, { recursive: true, force: true });
  });

  it('20 runs in flight when PostgreSQL restarts: every run ends done, each tool effect is made once, and the workers stop when told', { timeout: 300_000 }, async () => {
    const options = { calls: 3, modelDelayMs: 20, toolDelayMs: 200, effectsDir };
    const agent = counterAgent(runtime, undefined, options);
    workers.push(await startWorker(cluster.url, { ...options, concurrency: 6 }), await startWorker(cluster.url, { ...options, concurrency: 6 }));
    const runs = Promise.all(Array.from({ length: 20 }, (_, i) => agent.run(`Record three numbers (${i}).`)));
    const executions = () => readFileSync(join(effectsDir, 'executions'), 'utf8').split('\n').filter(Boolean).length;
    await expect.poll(() => { try { return executions(); } catch { return 0; } }, { timeout: 60_000, interval: 20 }).toBeGreaterThanOrEqual(10);
    cluster.restart();
    const results = await runs;
    expect(results.map((result) => [result.status, result.text])).toEqual(results.map(() => ['done', 'recorded 3']));
    // Three effects per run, each made once (a call made again after the restart finds its effect made).
    expect(readdirSync(effectsDir).filter((name) => name.startsWith('effect-'))).toHaveLength(60);
    for (const result of results) {
      const journal = await runtime.journal(result.runId);
      expect(journal.filter((entry) => entry.event.type === 'tool.finished')).toHaveLength(3);
      expect(journal.filter((entry) => entry.event.type === 'run.terminated')).toHaveLength(1);
    }
    // No worker hangs: each stops on SIGTERM, cleanly.
    expect(await Promise.all(workers.splice(0).map(stop))).toEqual([0, 0]);
  });
});
