/**
 * Vitest global setup: a throwaway PostgreSQL cluster for the `test/postgres` files. `initdb`
 * into a temp folder, `pg_ctl` on a free loopback port, trust auth for the current user; its
 * URL goes to the tests as `ACTORLOOP_TEST_DATABASE_URL`. Without the server binaries (a
 * machine without Debian's `postgresql`), the files skip with a note — except in CI, where
 * `.ci/run` installs them and a missing server is an error.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
    postgresMissing: string;
  }
}

/** Debian keeps the server binaries out of PATH, under /usr/lib/postgresql/<major>/bin. */
function serverBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const majors = readdirSync(root).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a));
    for (const major of majors) if (existsSync(join(root, major, 'bin', 'pg_ctl'))) return join(root, major, 'bin');
  }
  try {
    const found = execFileSync('sh', ['-c', 'command -v pg_ctl'], { encoding: 'utf8' }).trim();
    return found === '' ? undefined : join(found, '..');
  } catch {
    return undefined;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** initdb refuses to run as root: the cluster then belongs to the `postgres` system user. */
function asServerUser(bin: string, args: readonly string[]): void {
  const root = process.getuid?.() === 0;
  if (root) execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', [bin, ...args].map(quote).join(' ')], { stdio: 'pipe' });
  else execFileSync(bin, args, { stdio: 'pipe' });
}

const quote = (arg: string): string => `'${arg.replaceAll("'", `'\\''`)}'`;

export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  const bin = serverBin();
  if (bin === undefined) {
    if (process.env['CI'] === 'true') throw new Error('PostgreSQL server binaries not found: .ci/run installs Debian\'s postgresql.');
    project.provide('postgresUrl', '');
    project.provide('postgresMissing', 'PostgreSQL is not installed here (Debian: apt-get install postgresql); the Postgres runtime tests are skipped.');
    return undefined;
  }
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'actorloop-pg-'));
  const data = join(dir, 'data');
  if (root) execFileSync('chown', ['postgres:postgres', dir]);
  const user = root ? 'postgres' : userInfo().username;
  asServerUser(join(bin, 'initdb'), ['-D', data, '-U', user, '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  const options = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c max_connections=200 -c shared_buffers=64MB`;
  asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-o', options, '-l', join(dir, 'server.log'), '-w', 'start']);
  project.provide('postgresUrl', `postgres://${user}@127.0.0.1:${port}/postgres`);
  project.provide('postgresMissing', '');
  return () => {
    try {
      asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}
