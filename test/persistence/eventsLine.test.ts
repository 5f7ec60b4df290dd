import { appendFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../src/events/loopEvent.ts';
import { createFileStore, eventsLine, journalEntries } from '../../src/persistence/fileStore.ts';
import { LOG_VERSION, LogRecord, type EventRow } from '../../src/persistence/records.ts';
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

describe('events records', () => {
  it('are exactly JSON.stringify of the record, for any ids, numbers and event text (property)', () => {
    const text = fc.string({ unit: 'grapheme-composite', maxLength: 40 });
    const row = fc.tuple(fc.nat(), fc.oneof(fc.nat(), fc.double()), fc.nat(), text).map(
      ([sequence, timestamp, iteration, task]): EventRow => [sequence, timestamp, iteration, { type: 'run.started', task, model: 'm', tools: ['a"b'] }],
    );
    fc.assert(
      fc.property(text, text, fc.array(row, { maxLength: 12 }), (runId, agentId, rows) => {
        const line = eventsLine(rows, idsOf(runId, agentId));
        expect(line).toBe(JSON.stringify({ v: LOG_VERSION, kind: 'events', runId, agentId, entries: rows }));
        expect(line).not.toContain('\n');
      }),
      { numRuns: 300 },
    );
  });

  it('read back as the journal entries written, in order, interleaved with the other records as they happened', async () => {
    const store = createFileStore({ dir: tempDir() });
    const writer = store.createRun({ runId: 'run_rows', agentId: 'agent_rows', task: 't' });
    const written = Array.from({ length: 7 }, (_, i) => entry(i));
    written.slice(0, 3).forEach((e) => writer.event(e));
    writer.toolStarted('run_rows:call_1', 'deploy');
    written.slice(3, 5).forEach((e) => writer.event(e));
    await writer.flush();
    written.slice(5).forEach((e) => writer.event(e));
    await writer.close();

    const { records } = readRunLog(runFiles(store, 'run_rows').log);
    // Three events, the tool record they preceded, two events up to the flush, the rest at close.
    expect(records.map((r) => (r.kind === 'events' ? `events:${r.entries.length}` : r.kind))).toEqual(['run', 'events:3', 'tool_started', 'events:2', 'events:2']);
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
    expect(records.map((r) => r.kind)).toEqual(['run', 'events', 'event', 'events']);
    expect(journalEntries(records)).toEqual(written);
  });

  it('sit beside version 3 `event` records in one log: both are read, and a resume continues the sequence', async () => {
    const store = createFileStore({ dir: tempDir() });
    const writer = store.createRun({ runId: 'run_rows', agentId: 'agent_rows', task: 't' });
    writer.snapshot({ status: 'active', value: { running: 'reason' }, context: { runId: 'run_rows', messages: [] }, children: {} }, []);
    await writer.close();
    // A version 3 writer appended one line per entry.
    const { log } = runFiles(store, 'run_rows');
    appendFileSync(log, [entry(0), entry(1)].map((e) => `${JSON.stringify({ v: 3, kind: 'event', entry: e })}\n`).join(''));

    const resumed = store.resumeRun('run_rows');
    expect(resumed.recovered.nextSequence).toBe(2);
    resumed.writer.event(entry(2));
    await resumed.writer.close();
    const { records } = readRunLog(log);
    expect(records.map((r) => `${r.v}:${r.kind}`)).toEqual([`${LOG_VERSION}:run`, `${LOG_VERSION}:snapshot`, '3:event', '3:event', `${LOG_VERSION}:events`]);
    expect(store.readJournal('run_rows').entries).toEqual([entry(0), entry(1), entry(2)]);
  });

  it('are refused when a row is not [sequence, timestamp, iteration, event]', () => {
    const good = { v: LOG_VERSION, kind: 'events', runId: 'r', agentId: 'a', entries: [[0, 1, 0, { type: 'phase.entered', phase: 'act' }]] };
    expect(LogRecord.safeParse(good).success).toBe(true);
    for (const row of [[0, 1, 0], [-1, 1, 0, good.entries[0]?.[3]], [0, 1, 0.5, good.entries[0]?.[3]], [0, 1, 0, { type: 'no.such' }], ['0', 1, 0, good.entries[0]?.[3]]]) {
      expect(LogRecord.safeParse({ ...good, entries: [row] }).success, JSON.stringify(row)).toBe(false);
    }
  });
});
