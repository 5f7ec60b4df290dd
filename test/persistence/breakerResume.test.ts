import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFileStore } from '../../src/persistence/fileStore.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURE = join(import.meta.dirname, 'fixtures/breakerAgent.ts');
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function workspace() {
  const dir = mkdtempSync(join(tmpdir(), 'actorloop-breaker-'));
  dirs.push(dir);
  return { store: join(dir, 'store'), calls: join(dir, 'calls.txt') };
}

function runChild(ws: ReturnType<typeof workspace>, env: Record<string, string>) {
  const child = spawnSync(process.execPath, ['--import', 'tsx', FIXTURE], {
    cwd: ROOT,
    env: { ...process.env, STORE_DIR: ws.store, CALLS: ws.calls, RUN_ID: 'run_b', ...env },
    encoding: 'utf8',
    timeout: 14_000,
  });
  const last = child.stdout.split('\n').filter((line) => line.startsWith('{')).at(-1);
  return { signal: child.signal, status: child.status, stderr: child.stderr, result: last === undefined ? undefined : (JSON.parse(last) as Record<string, unknown>) };
}

const executions = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []);

describe('a breaker opened before a SIGKILL is still open after resume (real child processes)', { timeout: 30_000 }, () => {
  for (const [label, env] of [
    ['from the breaker records of the log', {}],
    ['from the checkpoint written after the breaker opened', { CHECKPOINTS: '1' }],
  ] as const) {
    it(`does not call the tool again: the call gets the breaker-open observation (${label})`, () => {
      const ws = workspace();
      const killed = runChild(ws, { MODE: 'start', ...env });
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
      expect(executions(ws.calls)).toEqual(['1', '2']);

      const resumed = runChild(ws, { MODE: 'resume', ...env });
      expect(resumed.status, resumed.stderr).toBe(0);
      // The third call was refused by the restored breaker: the tool ran twice in all.
      expect(executions(ws.calls)).toEqual(['1', '2']);
      expect(resumed.result).toMatchObject({ status: 'done' });
      expect(String(resumed.result?.text)).toContain('circuit breaker is open');

      const events = createFileStore({ dir: ws.store }).readJournal('run_b').entries.map((entry) => entry.event);
      const finished = events.flatMap((event) => (event.type === 'tool.finished' ? [event.status] : []));
      expect(finished).toEqual(['error', 'error', 'ok', 'circuit_open']);
    });
  }
});
