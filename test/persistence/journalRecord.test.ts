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
