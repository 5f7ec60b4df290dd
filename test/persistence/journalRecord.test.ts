import { appendFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { journalEntries, journalLine, type JournalColumns } from '../../src/persistence/runWriter.ts';
import { LOG_VERSION, LogRecord } from '../../src/persistence/records.ts';
import { readRunLog } from '../../src/persistence/runLog.ts';
import { removeTempDirs, runFiles, tempDir } from './support.ts';

afterAll(removeTempDirs);

const idsOf = (runId: string, agentId: string) => ({ runId, agentId, runIdJson: JSON.stringify(runId), agentIdJson: JSON.stringify(agentId) });

const entry = (sequence: number, runId = 'run_rows', agentId = 'agent_rows'): JournalEntry => ({
  sequence,
  timestamp: 1_700_000_000_000 + sequence,
  agentId,
  runId,
  iteration: Math.floor(sequence / 3),
  event: { type: 'phase.entered', phase: 'act' },
});

describe('journal records', () => {
  it('are exactly JSON.stringify of the record, for any ids, integers and event text (property)', () => {
    const text = fc.string({ unit: 'grapheme-composite', maxLength: 40 });
    const int = fc.integer({ min: -(2 ** 40), max: 2 ** 40 });
    const entries = fc.array(fc.tuple(fc.nat(), int, fc.nat(), text), { maxLength: 12 });
    fc.assert(
      fc.property(text, text, fc.maxSafeInteger(), entries, (runId, agentId, at, rows) => {
        const columns: JournalColumns = {
          at,
          sequence: rows.map((r) => r[0]),
          elapsed: rows.map((r) => r[1]),
          iteration: rows.map((r) => r[2]),
          events: rows.map((r) => ({ type: 'run.started', task: r[3], model: 'm', tools: ['a"b'] })),
        };
        const line = journalLine(columns, idsOf(runId, agentId));
        expect(line).toBe(JSON.stringify({ v: LOG_VERSION, kind: 'journal', runId, agentId, ...columns }));
        expect(line).not.toContain('\n');
      }),
      { numRuns: 300 },
    );
  });

  it('give back every timestamp exactly, whole milliseconds or not (property)', async () => {
    const dir = tempDir();
    // JSON has no -0 (it reads back as 0, in every record kind alike), so it is left out.
    const timestamp = fc
      .oneof(fc.maxSafeInteger(), fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }), fc.double({ noNaN: true, noDefaultInfinity: true }))
      .filter((t) => !Object.is(t, -0));
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(timestamp, { minLength: 1, maxLength: 8 }), async (timestamps) => {
        const store = createFileStore({ dir });
        const runId = `run_ts_${n++}`;
        const writer = store.createRun({ runId, agentId: 'agent_rows', task: 't' });
        const written = timestamps.map((t, i) => ({ ...entry(i, runId), timestamp: t }));
        written.forEach((e) => writer.event(e));
        await writer.close();
        expect(store.readJournal(runId).entries).toEqual(written);
      }),
      { numRuns: 60 },
    );
  });

  it('read back as the journal entries written, in order: one line at the head of each write, the other records in their order', async () => {
    const store = createFileStore({ dir: tempDir() });
    const writer = store.createRun({ runId: 'run_rows', agentId: 'agent_rows', task: 't' });
    const written = Array.from({ length: 7 }, (_, i) => entry(i));
    written.slice(0, 3).forEach((e) => writer.event(e));
    writer.callStarted('run_rows:0:0:deploy:h', 'deploy', 'h');
    written.slice(3, 5).forEach((e) => writer.event(e));
    writer.flushSync();
    written.slice(5).forEach((e) => writer.event(e));
    await writer.close();

    const { records } = readRunLog(runFiles(store, 'run_rows').log);
    // The five events up to the flush head its write, before the tool record; the rest at close.
    expect(records.map((r) => (r.kind === 'journal' ? `journal:${r.events.length}` : r.kind))).toEqual(['run', 'journal:5', 'call.started', 'journal:2']);
    expect(journalEntries(records)).toEqual(written);
    expect(store.readJournal('run_rows').entries).toEqual(written);
  });

  it('leave an entry of another run or agent in an `event` record of its own, in its place', async () => {
    const store = createFileStore({ dir: tempDir() });
    const writer = store.createRun({ runId: 'run_rows', agentId: 'agent_rows', task: 't' });
    const written = [entry(0), entry(1, 'run_rows', 'agent_other'), entry(2)];
    written.forEach((e) => writer.event(e));
    await writer.close();

    const { records } = readRunLog(runFiles(store, 'run_rows').log);
    expect(records.map((r) => r.kind)).toEqual(['run', 'journal', 'event', 'journal']);
    expect(journalEntries(records)).toEqual(written);
  });

  it('sit beside version 3 `event` and version 4 `events` records in one log: all are read, and a resume continues the sequence', async () => {
    const store = createFileStore({ dir: tempDir() });
    const limits = { maxIterations: 1, maxTotalTokens: 1, timeoutMs: 1, maxRepairTurns: 1 };
    const writer = store.createRun({ runId: 'run_rows', agentId: 'agent_rows', task: 't', input: { task: 't', limits, model: 'm', toolNames: [] } });
    await writer.close();
    // A version 3 writer appended one line per entry, a version 4 writer one line of rows.
    const { log } = runFiles(store, 'run_rows');
    appendFileSync(log, [entry(0), entry(1)].map((e) => `${JSON.stringify({ v: 3, kind: 'event', entry: e })}\n`).join(''));
    const rows = [entry(2), entry(3)].map((e) => [e.sequence, e.timestamp, e.iteration, e.event]);
    appendFileSync(log, `${JSON.stringify({ v: 4, kind: 'events', runId: 'run_rows', agentId: 'agent_rows', entries: rows })}\n`);

    const resumed = store.resumeRun('run_rows');
    expect(resumed.recovered.nextSequence).toBe(4);
    expect(resumed.recovered.iteration).toBe(1);
    resumed.writer.event(entry(4));
    await resumed.writer.close();
    const { records } = readRunLog(log);
    expect(records.map((r) => `${r.v}:${r.kind}`)).toEqual([`${LOG_VERSION}:run`, `${LOG_VERSION}:start`, '3:event', '3:event', '4:events', `${LOG_VERSION}:journal`]);
    expect(store.readJournal('run_rows').entries).toEqual([entry(0), entry(1), entry(2), entry(3), entry(4)]);
  });

  it('are refused when a version 4 row is not [sequence, timestamp, iteration, event]', () => {
    const good = { v: 4, kind: 'events', runId: 'r', agentId: 'a', entries: [[0, 1, 0, { type: 'phase.entered', phase: 'act' }]] };
    expect(LogRecord.safeParse(good).success).toBe(true);
    for (const row of [[0, 1, 0], [-1, 1, 0, good.entries[0]?.[3]], [0, 1, 0.5, good.entries[0]?.[3]], [0, 1, 0, { type: 'no.such' }], ['0', 1, 0, good.entries[0]?.[3]]]) {
      expect(LogRecord.safeParse({ ...good, entries: [row] }).success, JSON.stringify(row)).toBe(false);
    }
  });

  it('are refused when the columns differ in length or hold what an entry cannot', () => {
    const event = { type: 'phase.entered', phase: 'act' };
    const good = { v: LOG_VERSION, kind: 'journal', runId: 'r', agentId: 'a', at: 1_700_000_000_000, sequence: [0, 1], elapsed: [0, 3], iteration: [0, 0], events: [event, event] };
    expect(LogRecord.safeParse(good).success).toBe(true);
    const bad = [
      { sequence: [0] },
      { elapsed: [0, 1, 2] },
      { iteration: [] },
      { events: [event] },
      { sequence: [0, -1] },
      { elapsed: [0, 0.5] },
      { iteration: [0, 1.5] },
      { at: 1.5 },
      { events: [event, { type: 'no.such' }] },
    ];
    for (const change of bad) expect(LogRecord.safeParse({ ...good, ...change }).success, JSON.stringify(change)).toBe(false);
  });
});
