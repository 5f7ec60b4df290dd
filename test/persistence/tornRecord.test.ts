/**
 * a crash while appending leaves a torn last record. The reader drops it
 * with a warning, the writer cuts it off before appending, and the run resumes to the result an
 * uninterrupted run gives.
 */
import { appendFileSync, readFileSync, statSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createAgent } from '../../src/agent/createAgent.ts';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import { journalEntries } from '../../src/persistence/runWriter.ts';
import { LOG_VERSION, LogRecord } from '../../src/persistence/records.ts';
import { readRunLog } from '../../src/persistence/runLog.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { echoTool, interruptedRun, removeTempDirs, runFiles, type InterruptedRun } from './support.ts';

afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(removeTempDirs);

/** What identifies an entry across runs: everything but wall-clock fields. */
const shape = (entries: readonly JournalEntry[]) =>
  entries.map(({ sequence, iteration, runId, event }) => {
    const { durationMs: _durationMs, ...stable } = event as typeof event & { durationMs?: number };
    return { sequence, iteration, runId, event: stable };
  });

async function resumeToEnd(crashed: InterruptedRun) {
  const executions: string[] = [];
  const model = scriptedModel([{ text: 'finished' }]);
  const agent = createAgent({ id: 'agent_ref', model, tools: [echoTool(executions)], persistence: { store: crashed.store } });
  const result = await agent.resume(crashed.runId).settled;
  return { result, executions, model };
}

describe('a torn last record', () => {
  it('is dropped with a warning and the run resumes to the uninterrupted result', async () => {
    const crashed = await interruptedRun();
    const files = runFiles(crashed.store, crashed.runId);
    const inFlight = crashed.fullLines[crashed.cutAt] as string;
    const validBytes = statSync(files.log).size;
    appendFileSync(files.log, inFlight.slice(0, Math.floor(inFlight.length / 2)));

    const read = readRunLog(files.log);
    expect(read.warnings).toEqual([expect.stringMatching(/dropped a torn last record at line \d+/)]);
    expect(read.validBytes).toBe(validBytes);

    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const { result, executions } = await resumeToEnd(crashed);
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/torn last record/));
    expect(result.status).toBe('done');
    expect(result.text).toBe('finished');
    expect(result.messages).toEqual(crashed.reference.messages);
    // The act phase was in flight: its (idempotent) tool ran again, once, with the same key.
    expect(executions).toHaveLength(1);
    expect(executions[0]).toMatch(new RegExp(`^${crashed.runId}:1:0:echo:`));

    const after = crashed.store.readJournal(crashed.runId);
    expect(after.warnings).toEqual([]);
    // The torn bytes were cut before the first append: every line of the log is whole again.
    const lines = readFileSync(files.log, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    const referenceEntries = journalEntries(
      crashed.fullLines.filter((line) => line.trim() !== '').map((line) => LogRecord.parse(JSON.parse(line))),
    );
    // The uninterrupted run's journal, with one `run.resumed` where the resumed process took over.
    expect(after.entries.map((e) => e.sequence)).toEqual(after.entries.map((_, i) => i));
    const resumedAt = after.entries.findIndex((e) => e.event.type === 'run.resumed');
    expect(resumedAt).toBeGreaterThan(0);
    const withoutMarker = after.entries.filter((_, i) => i !== resumedAt).map((e, sequence) => ({ ...e, sequence }));
    expect(shape(withoutMarker)).toEqual(shape(referenceEntries));
  });

  it('cut inside a multi-byte character is dropped at the right byte offset', async () => {
    const crashed = await interruptedRun();
    const files = runFiles(crashed.store, crashed.runId);
    const validBytes = statSync(files.log).size;
    const torn = Buffer.from(`{"v":${LOG_VERSION},"kind":"event","entry":{"note":"naïve ☃ 🚀`, 'utf8');
    appendFileSync(files.log, torn.subarray(0, torn.length - 2)); // ends mid 🚀

    expect(readRunLog(files.log).validBytes).toBe(validBytes);
    vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const { result } = await resumeToEnd(crashed);
    expect(result.messages).toEqual(crashed.reference.messages);
    expect(crashed.store.readJournal(crashed.runId).warnings).toEqual([]);
  });

  it('that is complete but lacks its newline is not glued to the next record', async () => {
    // Killed after the record's bytes but before its "\n": the record was never acknowledged.
    const crashed = await interruptedRun();
    const files = runFiles(crashed.store, crashed.runId);
    const inFlight = crashed.fullLines[crashed.cutAt] as string;
    appendFileSync(files.log, inFlight.slice(0, -1));

    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const { result } = await resumeToEnd(crashed);
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/torn last record/));
    expect(result.status).toBe('done');
    expect(result.messages).toEqual(crashed.reference.messages);
    const after = crashed.store.readJournal(crashed.runId);
    expect(after.warnings).toEqual([]);
    expect(after.entries.map((e) => e.sequence)).toEqual(after.entries.map((_, i) => i));
  });
});
