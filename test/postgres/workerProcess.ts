/** Worker processes for the Postgres runtime tests: the fixture `worker.ts`, started and stopped as a deployment would. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TSX_LOADER } from '../cli/runCli.ts';
import type { FixtureOptions } from './fixtures/agents.ts';

const WORKER = fileURLToPath(new URL('./fixtures/worker.ts', import.meta.url));

/** Start a worker process; resolves once it takes jobs. */
export function startWorker(url: string, options: FixtureOptions & { concurrency?: number }): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, WORKER, url, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('ready')) resolve(child);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.once('exit', (code) => reject(new Error(`worker exited (${String(code)}) before it was ready: ${err.slice(0, 2000)}`)));
  });
}

/** Stop a worker with SIGTERM, as a deployment does; resolves with its exit code once it exited. */
export function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}
