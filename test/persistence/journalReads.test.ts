/**
 * A page following a run polls its journal from the store with the last sequence it has: each poll
 * reads what was appended since, not the run's whole log or segment again.
 */
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import { createFileStore, type RunStore } from '../../src/persistence/fileStore.ts';
import type { RunWriter } from '../../src/persistence/runWriter.ts';
import { storeReader } from '../../src/web/runFeed.ts';
import { removeTempDirs, tempDir } from './support.ts';

afterAll(removeTempDirs);
afterEach(() => vi.restoreAllMocks());

const entry = (runId: string, sequence: number): JournalEntry => ({
  sequence,
  timestamp: 1_700_000_000_000 + sequence,
  agentId: 'agent_poll',
  runId,
  iteration: 0,
  event: { type: 'token.delta', delta: `word ${sequence} ` },
});

/** Each batch is one flushed write: a journal line of the run. */
function writeBatch(writer: RunWriter, from: number, count: number): void {
  for (let i = from; i < from + count; i++) writer.event(entry(writer.runId, i));
  writer.flushSync();
}

/** The lines parsed while `read` runs: every record a reader parses goes through JSON.parse once. */
function parsedDuring<T>(read: () => T): { value: T; parsed: number } {
  const parse = vi.spyOn(JSON, 'parse');
  try {
    const value = read();
    return { value, parsed: parse.mock.calls.length };
  } finally {
    parse.mockRestore();
  }
}

async function followLongRun(store: RunStore, writer: RunWriter, file: () => string, other?: RunWriter): Promise<void> {
  const runId = writer.runId;
  const read = storeReader(store);
  let written = 0;
  for (; written < 400; written += 8) {
    writeBatch(writer, written, 8);
    if (other !== undefined) writeBatch(other, written, 8);
  }
  const first = await read(runId);
  expect(first.map((e) => e.sequence)).toEqual(Array.from({ length: written }, (_, i) => i));
  let after = written - 1;
  const parsedPerPoll: number[] = [];
  for (let poll = 0; poll < 30; poll++) {
    const before = statSync(file()).size;
    writeBatch(writer, written, 3);
    if (other !== undefined) writeBatch(other, written, 3);
    written += 3;
    const { value, parsed } = parsedDuring(() => store.readJournal(runId, { after }));
    // What it gives is what a whole read gives after `after`.
    expect(value.entries.map((e) => e.sequence)).toEqual([after + 1, after + 2, after + 3]);
    expect(value.entries).toEqual(store.readJournal(runId).entries.filter((e) => e.sequence > after));
    // It read only the bytes appended since the poll before, and parsed only the run's new line.
    expect(value.read?.bytes).toBe(statSync(file()).size - before);
    parsedPerPoll.push(parsed);
    after += 3;
    // The whole read above moved the cursor to the end; the next poll starts there too.
  }
  expect(new Set(parsedPerPoll)).toEqual(new Set([1]));
  // The page's own reader reads the same way.
  writeBatch(writer, written, 2);
  const polled = parsedDuring(() => read(runId, after));
  expect(polled.parsed).toBe(1);
  expect((await polled.value).map((e) => e.sequence)).toEqual([after + 1, after + 2]);
}

describe("polling a run's journal from the file store", () => {
  it('reads a run kept in a log of its own only from where the last read ended', async () => {
    const store = createFileStore({ dir: tempDir() });
    const writer = store.createRun({ runId: 'run_poll', agentId: 'agent_poll', task: 'stream a long answer' });
    const log = `${store.dir}/runs/run_poll.jsonl`;
    await followLongRun(store, writer, () => log);
    await writer.close();
  });

  it("reads a run in a segment shared with another run only from where the last read ended, and never the other run's lines", async () => {
    const store = createFileStore({ dir: tempDir(), mode: 'journal' });
    const writer = store.createRun({ agentId: 'agent_poll', task: 'stream a long answer' });
    const other = store.createRun({ agentId: 'agent_poll', task: 'stream beside it' });
    expect(other.log.file).toBe(writer.log.file);
    await followLongRun(store, writer, () => writer.log.file, other);
    await Promise.all([writer.close(), other.close()]);
  });

  it('reads the whole run again for a reader behind the last read (a page reconnecting), and gives what follows its sequence', async () => {
    const store = createFileStore({ dir: tempDir() });
    const writer = store.createRun({ runId: 'run_back', agentId: 'agent_poll', task: 't' });
    writeBatch(writer, 0, 10);
    expect(store.readJournal('run_back', { after: 9 }).entries).toEqual([]);
    writeBatch(writer, 10, 10);
    const behind = store.readJournal('run_back', { after: 4 });
    expect(behind.entries.map((e) => e.sequence)).toEqual(Array.from({ length: 15 }, (_, i) => i + 5));
    expect(behind.read?.records).toBe(3);
    expect(store.readJournal('run_back', { after: 19 }).read).toEqual({ bytes: 0, records: 0 });
    await writer.close();
  });

  it('reads a run whose log was created but not yet written as not there yet, leaving no corrupt copy', async () => {
    const store = createFileStore({ dir: tempDir(), mode: 'journal' });
    mkdirSync(`${store.dir}/runs`, { recursive: true });
    const log = `${store.dir}/runs/run_fresh.jsonl`;
    writeFileSync(log, '');
    expect(() => store.readJournal('run_fresh')).toThrow(expect.objectContaining({ code: 'run_not_found', message: expect.stringContaining('its first write has not landed') }));
    expect(existsSync(`${log}.corrupt`)).toBe(false);
    // A page polling it waits for its entries instead of failing.
    expect(await storeReader(store)('run_fresh')).toEqual([]);
  });
});
