/**
 * a writer killed with SIGKILL at random points of its write loop, 50 times.
 * The log and meta.json must always parse and hold every acknowledged write (the log at most one
 * record more, meta.json the acknowledged value or the one in flight); a stray lowdb temp file is
 * ignored by readers and removed by `resumeRun`.
 */
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { journalEntries } from '../../src/persistence/runWriter.ts';
import { readRunLog } from '../../src/persistence/runLog.ts';
import { killHard, removeTempDirs, runFiles, seededRandom, spawnFixture, tempDir } from './support.ts';

const KILLS = 50;
const PARALLEL = 2;
const SEED = 0x5eed;

afterAll(removeTempDirs);

interface Outcome {
  readonly lastAck: number;
  readonly naturalTemp: boolean;
  readonly torn: boolean;
}

describe('SIGKILL during the write loop', () => {
  it(`always leaves a parseable store holding every acknowledged write (${KILLS} kills)`, { timeout: 300_000 }, async () => {
    const dir = tempDir();
    const store = createFileStore({ dir });
    const random = seededRandom(SEED);
    // Drawn up front so the schedule does not depend on which worker finishes first.
    const delays = Array.from({ length: KILLS }, () => Math.floor(random() * 40));
    const outcomes: Outcome[] = [];
    const startupMs: number[] = [];
    const started = performance.now();

    async function killOnce(i: number): Promise<Outcome> {
      const runId = `loop_${i}`;
      const files = runFiles(store, runId);
      const spawnedAt = performance.now();
      const child = spawnFixture('writeLoop.ts', [dir, runId]);
      await child.waitFor((line) => line === 'ready');
      startupMs.push(performance.now() - spawnedAt);
      await new Promise((resolve) => setTimeout(resolve, delays[i]));
      await killHard(child);
      const acks = child.lines.filter((line) => line.startsWith('ack ')).map((line) => Number(line.slice(4)));
      const lastAck = acks.length === 0 ? -1 : (acks[acks.length - 1] as number);
      expect(acks).toEqual(Array.from({ length: acks.length }, (_, n) => n));

      // The log parses; it holds every acknowledged record in order, plus at most the one in flight.
      const log = readRunLog(files.log);
      const sequences = journalEntries(log.records).map((entry) => entry.sequence);
      expect(sequences.length === lastAck + 1 || sequences.length === lastAck + 2).toBe(true);
      expect(sequences).toEqual(Array.from({ length: sequences.length }, (_, n) => n));
      const torn = log.warnings.length > 0;
      if (torn) expect(log.warnings[0]).toMatch(/torn last record/);

      // meta.json parses and holds the acknowledged value or the one in flight.
      const naturalTemp = existsSync(files.tmp);
      if (!naturalTemp) writeFileSync(files.tmp, '{"v":1,"runId":"half-writ'); // plant one: readers must ignore it
      const meta = await store.getRun(runId);
      expect([lastAck, lastAck + 1]).toContain(meta?.updatedAt);
      // meta n is written only after log record n is in the file.
      if (meta?.updatedAt === lastAck + 1) expect(sequences).toHaveLength(lastAck + 2);
      expect((await store.listRuns()).find((m) => m.runId === runId)?.updatedAt).toBe(meta?.updatedAt);

      // Resuming takes over the dead writer's lock, removes the temp file and cuts a torn tail.
      const { writer, recovered } = store.resumeRun(runId);
      expect(existsSync(files.tmp)).toBe(false);
      expect(recovered.nextSequence).toBe(sequences.length);
      await writer.close();
      expect(statSync(files.log).size).toBe(log.validBytes);
      expect(readRunLog(files.log).warnings).toEqual([]);
      expect(readFileSync(files.log, 'utf8').endsWith('\n')).toBe(true);
      for (const file of [files.log, files.meta]) rmSync(file); // keeps the disk bounded: the big records add up
      return { lastAck, naturalTemp, torn };
    }

    let next = 0;
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        while (next < KILLS) outcomes.push(await killOnce(next++));
      }),
    );

    expect(outcomes).toHaveLength(KILLS);
    // The kills landed at different points of the loop, not all before the first write.
    expect(new Set(outcomes.map((o) => o.lastAck)).size).toBeGreaterThanOrEqual(4);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const temps = outcomes.filter((o) => o.naturalTemp).length;
    const torn = outcomes.filter((o) => o.torn).length;
    const acks = outcomes.map((o) => o.lastAck);
    console.info(
      `[case 3] ${KILLS} SIGKILLs in ${seconds} s; acks per kill ${Math.min(...acks)}–${Math.max(...acks)}; ` +
        `stray .meta.json.tmp left by the kill: ${temps}; torn log tails: ${torn}; ` +
        `mean child start-up ${Math.round(startupMs.reduce((a, b) => a + b, 0) / startupMs.length)} ms`,
    );
  });
});
