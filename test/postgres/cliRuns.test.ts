/**
 * `actorloop runs`, `replay`, `approve`, `reject` and `resume` on runs kept in PostgreSQL
 * (`--database-url`), as child processes. A worker in this process advances the
 * runs, with the same agents module the `resume` command loads.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/index.ts';
import { createPostgresRuntime, runWorker, type DurableWorker, type PostgresRuntime } from '../../src/postgres/index.ts';
import { runCli, tempDir } from '../cli/runCli.ts';
import define from '../cli/fixtures/userAgents.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';

const AGENTS = fileURLToPath(new URL('../cli/fixtures/userAgents.ts', import.meta.url));
const TIMEOUT = 120_000;
const missing = postgresMissing();

interface Row {
  runId: string;
  status: string;
  task: string;
  iterations: number;
}

describe.skipIf(missing !== '')('the actorloop command on runs kept in PostgreSQL', { timeout: TIMEOUT }, () => {
  const temp = tempDir();
  let url: string;
  let runtime: PostgresRuntime;
  let worker: DurableWorker;
  let deployer: Agent;

  beforeAll(async () => {
    url = await freshDatabase('cliruns');
    runtime = createPostgresRuntime({ connectionString: url, poolSize: 6 });
    await runtime.migrate();
    deployer = define(runtime, { runtime }).find((agent) => agent.id === 'deployer')!;
    worker = await runWorker({ runtime, concurrency: 2, pollIntervalMs: 200 });
  }, TIMEOUT);
  afterAll(async () => {
    await worker?.stop();
    await runtime?.close();
    temp.remove();
  });

  async function waiting(runId: string) {
    const run = deployer.start('Deploy it.', { runId });
    await expect.poll(() => run.phase(), { timeout: 30_000 }).toBe('awaitingHuman');
    return run;
  }

  it('lists and replays durable runs, approves one (the worker finishes it), and refuses a second approve', async () => {
    const run = await waiting('run_cli_approve');
    const listed = await runCli(['runs', '--database-url', url, '--json'], temp.dir);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout) as Row[]).toContainEqual(expect.objectContaining({ runId: 'run_cli_approve', status: 'awaiting_human', task: 'Deploy it.', iterations: 1 }));
    const table = await runCli(['runs', '--database-url', url], temp.dir);
    expect(table.stdout).toMatch(/^run_cli_approve\s+awaiting_human\s+1\s/m);
    const replay = await runCli(['replay', 'run_cli_approve', '--database-url', url], temp.dir);
    expect(replay.code).toBe(0);
    expect(replay.stdout.split('\n')[0]).toMatch(/^\+0\.000s\s+\[0\] run started: Deploy it\./);

    const approved = await runCli(['approve', 'run_cli_approve', '--database-url', url], temp.dir);
    expect(approved).toMatchObject({ code: 0, stderr: '' });
    expect(approved.stdout).toContain('approved the calls run run_cli_approve waits on');
    expect((await run.result).text).toBe('shipped');
    const again = await runCli(['approve', 'run_cli_approve', '--database-url', url], temp.dir);
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toBe('actorloop: Run run_cli_approve is not waiting for a human (status done): there is nothing to approve.');
    // The URL (which may hold a password) is never printed.
    for (const out of [listed, table, replay, approved, again]) expect(out.stdout + out.stderr).not.toContain(url);
  }, TIMEOUT);

  it('rejects with --database-url, the reason going back to the model; DATABASE_URL alone reads the file store', async () => {
    const run = await waiting('run_cli_reject');
    // The environment's DATABASE_URL may be another application's: without the flag the command reads the file store.
    const fromFiles = await runCli(['reject', 'run_cli_reject', '--reason', 'not on a Friday'], temp.dir, { DATABASE_URL: url });
    expect(fromFiles.code).toBe(1);
    expect(fromFiles.stderr).toContain('No run store at');
    const rejected = await runCli(['reject', 'run_cli_reject', '--reason', 'not on a Friday', '--database-url', url], temp.dir);
    expect(rejected.code).toBe(0);
    expect((await run.result).text).toMatch(/^not shipped: .*not on a Friday/);
  }, TIMEOUT);

  it('resume follows a durable run through its module agent to its wait for a human; it needs the module, and an ended run has nothing to resume', async () => {
    await waiting('run_cli_resume');
    const noModule = await runCli(['resume', 'run_cli_resume', '--database-url', url], temp.dir);
    expect(noModule.code).toBe(2);
    expect(noModule.stderr).toContain('needs --agents MODULE: the module your workers load, which defines agent "deployer"');
    const resumed = await runCli(['resume', 'run_cli_resume', '--database-url', url, '--agents', AGENTS], temp.dir);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('run run_cli_resume is waiting for a human');
    const ended = await runCli(['resume', 'run_cli_approve', '--database-url', url, '--agents', AGENTS], temp.dir);
    expect(ended.code).toBe(1);
    expect(ended.stderr).toContain('Run run_cli_approve already ended (done)');
    const unknown = await runCli(['replay', 'run_nobody', '--database-url', url], temp.dir);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No run run_nobody in the database');
  }, TIMEOUT);
});
