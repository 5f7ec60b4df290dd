/**
 * A throwaway PostgreSQL cluster for the tests and the benchmark: `initdb` into a temp folder,
 * `pg_ctl` on a free loopback port, trust auth, no fsync by default. `stop()` stops it and removes the
 * folder. Without the server binaries (a machine without Debian's `postgresql`) it says so
 * instead of throwing, so each caller decides whether that is a skip or an error.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

export interface Cluster {
  /** `postgres://<user>@127.0.0.1:<port>/postgres`. */
  readonly url: string;
  /** The postmaster's pid (until a restart): every server process is it or one of its children. */
  readonly pid: number;
  /** Stop the server at once and remove its folder. */
  stop(): void;
  /** Stop the server at once, as a crash would (`pg_ctl stop -m immediate`), then start it again on the same port. */
  restart(): void;
}

export interface ClusterOptions {
  /** The server's `max_connections` (default 200). */
  readonly maxConnections?: number;
  /** Sync to disk as a production server does (default false: faster, and a test cluster is thrown away). */
  readonly fsync?: boolean;
}

/** Debian keeps the server binaries out of PATH, under /usr/lib/postgresql/<major>/bin. */
export function serverBin(): string | undefined {
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

/**
 * @example
 * ```ts
 * const cluster = await startCluster();
 * if ('missing' in cluster) console.warn(cluster.missing);
 * else try { use(cluster.url); } finally { cluster.stop(); }
 * ```
 */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster | { readonly missing: string }> {
  const bin = serverBin();
  if (bin === undefined) return { missing: 'PostgreSQL server binaries (pg_ctl) not found: neither /usr/lib/postgresql/<major>/bin nor PATH has them.' };
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'actorloop-pg-'));
  const data = join(dir, 'data');
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    if (root) execFileSync('chown', ['postgres:postgres', dir]);
    const user = root ? 'postgres' : userInfo().username;
    asServerUser(join(bin, 'initdb'), ['-D', data, '-U', user, '--auth=trust', '-E', 'UTF8', '--no-sync']);
    const port = await freePort();
    const settings = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=${options.fsync === true ? 'on' : 'off'} -c max_connections=${options.maxConnections ?? 200} -c shared_buffers=64MB`;
    const start = () => asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-o', settings, '-l', join(dir, 'server.log'), '-w', 'start']);
    const stopNow = () => asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
    start();
    // postmaster.pid's first line is the postmaster's pid (root reads it whoever owns it).
    const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return {
      url: `postgres://${user}@127.0.0.1:${port}/postgres`,
      pid,
      stop: () => {
        try {
          stopNow();
        } finally {
          remove();
        }
      },
      restart: () => {
        stopNow();
        start();
      },
    };
  } catch (error) {
    remove();
    throw error;
  }
}
