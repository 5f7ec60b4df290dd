/**
 * A record that cannot be written (here: a value JSON cannot serialise, as a failing disk would
 * fail an append) must not crash the host or stop the run: the run goes on, everything else is
 * still written, and the first failure is reported when the run ends.
 */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createRunPersistence } from '../../src/run/persistence.ts';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { readRunLog } from '../../src/persistence/runLog.ts';
import { removeTempDirs, runFiles, tempDir } from './support.ts';

afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(removeTempDirs);

const entry = (sequence: number, task: unknown = 'ok'): JournalEntry =>
  ({ sequence, timestamp: sequence, agentId: 'agent_w', runId: 'run_w', iteration: 0, event: { type: 'run.started', task, model: 'm', tools: [] } }) as JournalEntry;

const key = { key: 'run_w:0:0:echo:h', args: 'h' };

describe('a record that cannot be written', () => {
  it('fails its write, once, after every other event is written', async () => {
    const store = createFileStore({ dir: tempDir() });
    const writer = store.createRun({ runId: 'run_w', agentId: 'agent_w', task: 't' });
    writer.event(entry(0));
    writer.event(entry(1, 10n));
    expect(() => writer.flushSync()).toThrow(/BigInt/);
    writer.event(entry(2));
    expect(() => writer.flushSync()).not.toThrow();
    // A record after a bad event is still written; the bad event's failure is thrown once, by the write.
    writer.event(entry(3, 11n));
    const outcome = { toolCallId: 'c1', tool: 'echo', status: 'ok', content: 'done', isError: false } as const;
    writer.callFinished(key.key, outcome);
    await expect(writer.close()).rejects.toThrow(/BigInt/);
    // Only the bad entries are lost, not the rest of their batches; the log stays valid.
    expect(store.readJournal('run_w').entries.map((e) => e.sequence)).toEqual([0, 2]);
    const { records } = readRunLog(runFiles(store, 'run_w').log);
    expect(records.map((r) => r.kind)).toEqual(['run', 'journal', 'journal', 'call.finished']);
    expect(records.find((r) => r.kind === 'call.finished')).toMatchObject({ key: key.key, outcome });
  });

  it('never throws into the run: replies, events and tool results that fail are reported when the run ends', async () => {
    const store = createFileStore({ dir: tempDir() });
    const persistence = createRunPersistence(store.createRun({ runId: 'run_w', agentId: 'agent_w', task: 't' }));
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);

    expect(() => persistence.onPhase('reason')).not.toThrow();
    expect(() => persistence.record(entry(0, 1n))).not.toThrow();
    const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2 };
    expect(() => persistence.reply({ kind: 'reason', iteration: 0, output: { text: 'x', toolCalls: [], usage, costUsd: 2n as never } })).not.toThrow();
    expect(() => persistence.onPhase('gate')).not.toThrow();
    const outcome = { toolCallId: 'c1', tool: 'echo', status: 'ok', content: 'done', isError: false, extra: 3n } as never;
    expect(() => persistence.journal?.after({ call: { id: 'c1', name: 'echo', arguments: '{}' } } as never, outcome, key)).not.toThrow();
    persistence.record(entry(1));
    expect(() => persistence.onPhase('reason')).not.toThrow();
    await persistence.finish('final_answer', {});

    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]?.join(' ')).toMatch(/run run_w: persisting failed:.*BigInt/s);
    // What could be written was: the good event, and the run's end.
    expect(store.readJournal('run_w').entries.map((e) => e.sequence)).toEqual([1]);
    expect((await store.getRun('run_w'))?.status).toBe('done');
  });
});

describe('a journal entry that cannot be written to a journal-only store', () => {
  it('is reported once when the run ends, and every other entry and the end are still written', async () => {
    const store = createFileStore({ dir: tempDir(), mode: 'journal' });
    const persistence = createRunPersistence(store.createRun({ runId: 'run_w', agentId: 'agent_w', task: 't' }));
    expect(persistence.journal).toBeUndefined();
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);

    persistence.record(entry(0));
    expect(() => persistence.onPhase('reason')).not.toThrow();
    persistence.record(entry(1, 1n));
    expect(() => persistence.onPhase('gate')).not.toThrow();
    persistence.record(entry(2));
    expect(() => persistence.onPhase('act')).not.toThrow();
    await persistence.finish('final_answer', {});

    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]?.join(' ')).toMatch(/run run_w: writing the journal failed:.*BigInt/s);
    expect(store.readJournal('run_w').entries.map((e) => e.sequence)).toEqual([0, 2]);
    expect((await store.getRun('run_w'))?.status).toBe('done');
  });
});
