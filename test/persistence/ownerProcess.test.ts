/**
 * A journal-only run renews no lease: whether its writer still runs is told from the process its
 * header names. A pid the system gave to another process since is not that process: on Linux its
 * start time tells them apart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerProcessLive } from '../../src/persistence/lock.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { LOG_VERSION } from '../../src/persistence/records.ts';
import { removeTempDirs, runFiles, tempDir } from './support.ts';

const HOUR = 3_600_000;

describe.skipIf(process.platform !== 'linux')('the owner of a journal-only run, told by pid and start time', () => {
  let child: ChildProcess;
  let exited: Promise<unknown>;
  /** When the child started, as it records itself in a header it writes. */
  let startedAt: number;

  beforeAll(async () => {
    child = spawn(process.execPath, ['-e', 'console.log(Math.round(performance.timeOrigin)); setInterval(() => {}, 60_000);'], { stdio: ['ignore', 'pipe', 'ignore'] });
    exited = new Promise((resolve) => child.once('exit', resolve));
    startedAt = await new Promise<number>((resolve) => child.stdout?.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))));
  }, 30_000);
  afterAll(async () => {
    child.kill('SIGKILL');
    await exited;
    removeTempDirs();
  });

  const owner = (at: number) => ({ pid: child.pid as number, host: hostname(), startedAt: at });

  it('is the live process its header names when its pid runs and started when the header says', () => {
    expect(ownerProcessLive(owner(startedAt))).toBe(true);
  });

  it('is gone when a process runs under its pid that started at another time (a reused pid)', () => {
    expect(ownerProcessLive(owner(startedAt - HOUR))).toBe(false);
    expect(ownerProcessLive(owner(startedAt + HOUR))).toBe(false);
  });

  it('makes the store report a run whose header names a reused pid as having lost its owner, and one naming the live process as not', () => {
    const store = createFileStore({ dir: tempDir(), mode: 'journal' });
    const header = (runId: string, at: number) => {
      const { log } = runFiles(store, runId);
      mkdirSync(dirname(log), { recursive: true });
      writeFileSync(log, `${JSON.stringify({ v: LOG_VERSION, kind: 'run', runId, agentId: 'agent_x', task: 'Work.', createdAt: at, owner: owner(at), journalOnly: true })}\n`);
    };
    header('run_reused_pid', startedAt - HOUR);
    header('run_live_owner', startedAt);
    expect(store.ownerGone('run_reused_pid')).toBe(true);
    expect(store.ownerGone('run_live_owner')).toBe(false);
  });
});
