import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresRuntime, type PostgresRuntime } from '../../src/postgres/index.ts';
import { MAIN, offlineEnv, runCli, tempDir, TSX_LOADER } from '../cli/runCli.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { counterAgent, prepareEffectTables } from './fixtures/agents.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/cliAgents.ts', import.meta.url));
const missing = postgresMissing();

describe.skipIf(missing !== '')('actorloop db migrate and actorloop worker', { timeout: 60_000 }, () => {
  const temp = tempDir();
  let url: string;
  let pool: pg.Pool;
  let runtime: PostgresRuntime | undefined;

  beforeAll(async () => {
    url = await freshDatabase('cli');
    pool = new pg.Pool({ connectionString: url, max: 2 });
  });
  afterAll(async () => {
    await runtime?.close();
    await pool.end();
    temp.remove();
  });

  it('migrates a database once, then says it is up to date', async () => {
    const first = await runCli(['db', 'migrate', '--database-url', url], temp.dir);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toContain('Migrated the actorloop schema from version 0 to 4');
    const again = await runCli(['db', 'migrate', '--database-url', url, '--json'], temp.dir);
    expect(JSON.parse(again.stdout)).toEqual({ from: 4, to: 4, applied: [] });
  });

  it('refuses to start a worker without its agents module or its database, with the usage', async () => {
    const noAgents = await runCli(['worker', '--database-url', url], temp.dir);
    expect(noAgents.code).toBe(2);
    expect(noAgents.stderr).toContain('needs --agents MODULE');
    const noModule = await runCli(['worker', '--database-url', url, '--agents', './nowhere.js'], temp.dir);
    expect(noModule.code).toBe(1);
    expect(noModule.stderr).toContain('Could not load the agents module ./nowhere.js');
    const noDb = await runCli(['db', 'migrate'], temp.dir);
    expect(noDb.code).toBe(2);
  });

  it('runs a worker that serves the module\'s agents until it is stopped', async () => {
    await prepareEffectTables(pool);
    const child = spawn(process.execPath, ['--import', TSX_LOADER, MAIN, 'worker', '--agents', AGENTS, '--concurrency', '4'], {
      cwd: temp.dir,
      env: { ...offlineEnv(), DATABASE_URL: url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    await expect.poll(() => out, { timeout: 15_000 }).toContain('serving counter');
    runtime = createPostgresRuntime({ connectionString: url, poolSize: 2 });
    const agent = counterAgent(runtime, pool, { calls: 1 });
    expect(await agent.run('Record one number.')).toMatchObject({ status: 'done', text: 'recorded 1' });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
