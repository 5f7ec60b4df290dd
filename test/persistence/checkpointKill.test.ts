/**
 * A long run killed with a real SIGKILL resumes from its last checkpoint, whether it has a log of its
 * own or shares a journal segment: the store reads a
 * bounded number of the log's records (the last checkpoint, its bases and what followed it), not
 * the whole log, and the run ends as if never killed, every tick made once.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { readRunLog } from '../../src/persistence/runLog.ts';
import { segmentFile, segmentIdOf, segmentRecords } from '../../src/persistence/journalSegment.ts';
import { FIXTURES, removeTempDirs, ROOT, runFiles, tempDir } from './support.ts';

afterAll(removeTempDirs);

const ITERATIONS = 300;
const KILL_AT = 287;

function runChild(env: Record<string, string>) {
  const child = spawnSync(process.execPath, ['--import', 'tsx', join(FIXTURES, 'longRun.ts')], {
    cwd: ROOT,
    env: { ...process.env, ITERATIONS: String(ITERATIONS), ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const lines = child.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { signal: child.signal, status: child.status, lines, stderr: child.stderr };
}

/** Records in the files that hold the run: its own log, or the segment it shares with other runs. */
function recordsWritten(dir: string, runId: string): number {
  const segment = segmentIdOf(runId);
  return segment === undefined ? readRunLog(runFiles(createFileStore({ dir }), runId).log).records.length : segmentRecords(segmentFile(join(dir, 'journal'), segment), runId).records.length;
}

describe('a 300-iteration run killed near its end (real SIGKILL)', () => {
  // A run whose id the caller chose has a log of its own; one whose id the store picked shares a journal segment.
  it.each([
    ['its own log', { RUN_ID: 'run_long' }],
    ['a journal segment', {}],
  ])('in %s, resumes from its last checkpoint, reading a bounded number of records, and ends as if never killed', { timeout: 120_000 }, (_, ids: Record<string, string>) => {
    const dir = tempDir();
    const effects = join(dir, 'effects.txt');
    const killed = runChild({ ...ids, STORE_DIR: dir, MODE: 'start', KILL_AT: String(KILL_AT), EFFECTS: effects });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const runId = String(killed.lines[0]?.runId);
    expect(runId === 'run_long').toBe(ids.RUN_ID !== undefined);
    const written = recordsWritten(dir, runId);

    const resumed = runChild({ RUN_ID: runId, STORE_DIR: dir, MODE: 'resume', EFFECTS: effects });
    expect(resumed.status, resumed.stderr).toBe(0);
    const [restore, result] = resumed.lines as [{ read: { records: number }; checkpoint: number | null }, { status: string; iterations: number; messages: { role: string; content: string | null }[] }];
    // Checkpoints every 10 iterations: the last before the kill, at 280, its bases (24 and 16
    // of the 28 written: at most log2 of them) and the few iterations after it.
    expect(restore.checkpoint).toBe(280);
    expect(restore.read.records).toBeLessThanOrEqual(5 + 10 * 8);
    expect(written).toBeGreaterThan(ITERATIONS * 5);

    expect(result.status).toBe('done');
    expect(result.iterations).toBe(ITERATIONS + 1);
    const ticks = result.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(ticks).toEqual(Array.from({ length: ITERATIONS }, (_, n) => `tick ${n}`));
    // Every tick took effect once, the one killed after its effect included.
    const made = readFileSync(effects, 'utf8').trim().split('\n').map((line) => Number(line.split(' ')[1]));
    expect(made).toEqual(Array.from({ length: ITERATIONS }, (_, n) => n));
  });
});
