/**
 * The kernel may write fewer bytes than asked (a signal, a nearly full disk). A run log must then
 * write the rest, or cut the part that landed off again and say so with a typed error: never leave
 * a torn line with later lines after it.
 */
import type * as Fs from 'node:fs';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { LOG_VERSION, type LogRecord } from '../../src/persistence/records.ts';
import { readRunLog, RunLogWriter } from '../../src/persistence/runLog.ts';
import { StoreError } from '../../src/persistence/errors.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import type { Message } from '../../src/core/messages.ts';
import { removeTempDirs, tempDir } from './support.ts';

/** How the mocked writes behave: at most `cap` bytes per call; the call numbered `failAt` fails with ENOSPC. */
const disk = vi.hoisted(() => ({ cap: Number.POSITIVE_INFINITY, calls: 0, failAt: Number.POSITIVE_INFINITY }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof Fs>();
  const slice = (data: string | NodeJS.ArrayBufferView, offset?: unknown, length?: unknown): Buffer => {
    const bytes = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const from = typeof data === 'string' || typeof offset !== 'number' ? 0 : offset;
    const size = typeof data === 'string' || typeof length !== 'number' ? bytes.length - from : length;
    return bytes.subarray(from, from + Math.min(size, disk.cap));
  };
  const fail = (): NodeJS.ErrnoException | null => {
    disk.calls++;
    if (disk.calls < disk.failAt) return null;
    return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  };
  const writeSync = (fd: number, data: string | NodeJS.ArrayBufferView, offset?: unknown, length?: unknown): number => {
    const error = fail();
    if (error !== null) throw error;
    return fs.writeSync(fd, slice(data, offset, length));
  };
  const write = (fd: number, data: string | NodeJS.ArrayBufferView, ...rest: unknown[]): void => {
    const callback = rest.at(-1) as (error: NodeJS.ErrnoException | null, bytes: number) => void;
    const error = fail();
    if (error !== null) return setImmediate(() => callback(error, 0)) && undefined;
    fs.write(fd, slice(data, rest[0], rest[1]), (err, bytes) => callback(err, bytes));
  };
  return { ...fs, default: { ...fs, writeSync, write }, writeSync, write };
});

afterEach(() => {
  disk.cap = Number.POSITIVE_INFINITY;
  disk.calls = 0;
  disk.failAt = Number.POSITIVE_INFINITY;
});
afterAll(removeTempDirs);

const header: LogRecord = { v: LOG_VERSION, kind: 'run', runId: 'run_s', agentId: 'agent_s', task: 'a task with ünïcode', createdAt: 0, owner: { pid: 1 } };
const started = (n: number): LogRecord => ({ v: LOG_VERSION, kind: 'call.started', key: `run_s:0:${n}:echo:h`, tool: 'echo', args: `{"n":${n}}` });

describe('a run log whose writes come back short', () => {
  it('writes the rest of a synchronous batch until every line is in the file', () => {
    const file = join(tempDir(), 'run.jsonl');
    const log = new RunLogWriter(file, { create: true });
    disk.cap = 7;
    log.append(header);
    log.append(started(1));
    log.append(started(2));
    log.flushSync();
    const { records, warnings } = readRunLog(file);
    expect(warnings).toEqual([]);
    expect(records).toEqual([header, started(1), started(2)]);
    expect(log.bytes).toBe(statSync(file).size);
    // Took many calls: the cap really was hit.
    expect(disk.calls).toBeGreaterThan(10);
  });

  it('writes the rest of a background batch too', async () => {
    const file = join(tempDir(), 'run.jsonl');
    const log = new RunLogWriter(file, { create: 'background', fresh: true });
    disk.cap = 5;
    log.append(header);
    log.append(started(1));
    await log.flushBehind();
    log.append(started(2));
    await log.flushBehind();
    await log.close();
    expect(readRunLog(file).records).toEqual([header, started(1), started(2)]);
    expect(disk.calls).toBeGreaterThan(10);
  });

  it('cuts a batch that failed halfway off again, says so with a StoreError, and goes on appending whole lines', () => {
    const file = join(tempDir(), 'run.jsonl');
    const log = new RunLogWriter(file, { create: true });
    log.append(header);
    log.flushSync();
    const whole = statSync(file).size;
    disk.calls = 0;
    disk.cap = 9;
    disk.failAt = 3; // two short writes land, the third fails
    log.append(started(1));
    let failure: unknown;
    try {
      log.flushSync();
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(StoreError);
    expect(failure).toMatchObject({ code: 'log_write_failed', file, blame: 'runtime' });
    expect((failure as Error).message).toMatch(/18 of \d+ bytes .*no space left.*cut off/);
    expect(statSync(file).size).toBe(whole);

    disk.failAt = Number.POSITIVE_INFINITY;
    log.append(started(2));
    log.flushSync();
    const { records, warnings } = readRunLog(file);
    expect(warnings).toEqual([]);
    expect(records).toEqual([header, started(2)]);
    expect(readFileSync(file, 'utf8').endsWith('\n')).toBe(true);
  });
});

describe('a checkpoint whose write failed', () => {
  it('is not what the run\'s later checkpoints build on: the run still resumes from its last one once the disk takes writes again', async () => {
    const store = createFileStore({ dir: tempDir(), checkpoints: { every: 1 } });
    const writer = store.createRun({ runId: 'run_full_disk', agentId: 'a', task: 't' });
    const conversation: Message[] = [];
    const take = (iteration: number): void => {
      conversation.push({ role: 'user', content: `message ${iteration}` });
      writer.checkpoint({ iteration, sequence: 0, snapshot: { iteration }, messages: [...conversation] });
    };
    take(1);
    writer.flushSync();
    take(2);
    // The disk is full for this one write, not after.
    disk.failAt = disk.calls + 1;
    expect(() => writer.flushSync()).toThrow(expect.objectContaining({ code: 'log_write_failed' }));
    disk.failAt = Number.POSITIVE_INFINITY;
    take(3);
    writer.end('timeout', { resumable: true });
    await writer.close();

    const resumed = store.resumeRun('run_full_disk');
    expect(resumed.recovered.checkpoint).toMatchObject({ iteration: 3, messages: conversation });
    resumed.writer.end('final_answer');
    await resumed.writer.close();
  });
});
