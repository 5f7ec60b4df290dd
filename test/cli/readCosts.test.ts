/**
 * Following a run and listing runs cost what changed, counted in bytes and journal reads: `replay
 * --follow` reads only what was appended since its last poll, `runs` takes an ended run's iterations
 * and cost from the index, and traces read a run again only from where they left it.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listRunRows } from '../../src/cli/commands/runs.ts';
import { replayStore } from '../../src/cli/commands/replay.ts';
import { journalTotals } from '../../src/cli/format.ts';
import type { JournalEntry, LoopEvent } from '../../src/core/loopEvent.ts';
import { createFileStore, type RunStore, type RunWriter } from '../../src/persistence/fileStore.ts';
import { segmentFile, segmentIdOf } from '../../src/persistence/journalSegment.ts';
import { createTraces } from '../../src/traces/query.ts';
import { MemoryJournal } from '../../src/events/memoryJournal.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'actorloop-reads-'));
  dirs.push(dir);
  return dir;
};

const USAGE = { promptTokens: 10, completionTokens: 5, totalTokens: 15 };

/** One model turn of a run: its reply (with a cost) and a streamed answer big enough to count. */
class Scribe {
  sequence = 0;
  iteration = 0;
  constructor(
    readonly writer: RunWriter,
    readonly agentId = 'scribe',
  ) {}
  #emit(event: LoopEvent): void {
    const entry: JournalEntry = { sequence: this.sequence++, timestamp: Date.now(), agentId: this.agentId, runId: this.writer.runId, iteration: this.iteration, event };
    this.writer.event(entry);
  }
  start(): void {
    this.#emit({ type: 'run.started', task: 'count', model: 'scripted', tools: [] });
  }
  turn(): void {
    this.iteration++;
    for (let i = 0; i < 10; i++) this.#emit({ type: 'token.delta', delta: `word ${i} `.repeat(20) });
    this.#emit({ type: 'reasoning.completed', text: 'more', toolCalls: [], usage: USAGE, costUsd: 0.25 });
    this.writer.flushSync();
  }
  end(): void {
    this.#emit({ type: 'run.terminated', reason: 'final_answer', iterations: this.iteration, usage: USAGE });
    this.writer.end('final_answer');
  }
}

/** The store, each of its journal reads counted. */
function counted(store: RunStore): { store: RunStore; reads: { runId: string; bytes: number; after: number | undefined }[] } {
  const reads: { runId: string; bytes: number; after: number | undefined }[] = [];
  return {
    reads,
    store: {
      ...store,
      readJournal(runId, options) {
        const read = store.readJournal(runId, options);
        reads.push({ runId, bytes: read.read?.bytes ?? Number.NaN, after: options?.after });
        return read;
      },
    },
  };
}

describe('replay --follow on a file store', () => {
  it('reads, at each poll, only the bytes appended since the last one, and prints every entry once, in order', { timeout: 30_000 }, async () => {
    const dir = tempDir();
    const store = createFileStore({ dir });
    const scribe = new Scribe(store.createRun({ runId: 'followed', agentId: 'scribe', task: 'count' }));
    scribe.start();
    for (let i = 0; i < 20; i++) scribe.turn();
    const log = join(dir, 'runs', 'followed.jsonl');
    const sizes: number[] = [];
    const { store: watched, reads } = counted(store);
    const reading: RunStore = {
      ...watched,
      readJournal(runId, options) {
        const read = watched.readJournal(runId, options);
        sizes.push(statSync(log).size);
        // The run goes on between polls: a turn each, then its end.
        if (sizes.length < 6) scribe.turn();
        else if (sizes.length === 6) scribe.end();
        return read;
      },
    };
    const printed: number[] = [];
    expect(await replayStore(reading, 'followed', true, (entry) => printed.push(entry.sequence))).toBe('ended');

    expect(printed).toEqual([...Array(scribe.sequence).keys()]);
    expect(reads.length).toBeGreaterThanOrEqual(7);
    expect(reads[0]?.bytes).toBe(sizes[0]);
    // Each later poll read what the run appended since the one before: a turn is a small part of the log.
    for (let i = 1; i < reads.length; i++) expect(reads[i]?.bytes).toBe((sizes[i] as number) - (sizes[i - 1] as number));
    expect(reads[1]?.bytes).toBeLessThan((sizes[1] as number) / 10);
  });
});

describe('actorloop runs', () => {
  it("takes an ended run's iterations and cost from the index, reading the journal only of a run still going", async () => {
    const dir = tempDir();
    const store = createFileStore({ dir });
    const expected = new Map<string, { iterations: number; costUsd: number }>();
    const journalOf = (runId: string) => journalTotals(store.readJournal(runId).entries);
    // Runs with a log of their own and runs sharing a segment.
    for (const runId of ['named_a', 'named_b', undefined, undefined]) {
      const scribe = new Scribe(store.createRun({ ...(runId === undefined ? {} : { runId }), agentId: 'scribe', task: 'count' }));
      scribe.start();
      for (let i = 0; i <= expected.size; i++) scribe.turn();
      scribe.end();
      const { iterations, costUsd } = journalOf(scribe.writer.runId);
      expected.set(scribe.writer.runId, { iterations, costUsd });
    }
    const going = new Scribe(store.createRun({ agentId: 'scribe', task: 'still going' }));
    going.start();
    going.turn();
    expect(segmentIdOf(going.writer.runId)).toBeDefined();
    expect(statSync(segmentFile(join(dir, 'journal'), segmentIdOf(going.writer.runId) as string)).size).toBeGreaterThan(0);

    const { store: watched, reads } = counted(store);
    const rows = await listRunRows(watched);

    expect(reads.map((read) => read.runId)).toEqual([going.writer.runId]);
    for (const [runId, totals] of expected) expect(rows.find((row) => row.runId === runId)).toMatchObject({ status: 'done', ...totals });
    expect(rows.find((row) => row.runId === going.writer.runId)).toMatchObject({ status: 'running', iterations: 1, costUsd: 0.25 });
  });
});

describe('traces of a store', () => {
  it('read a run again only from where the last reading left it', async () => {
    const dir = tempDir();
    const store = createFileStore({ dir });
    const scribe = new Scribe(store.createRun({ runId: 'traced', agentId: 'scribe', task: 'count' }));
    scribe.start();
    for (let i = 0; i < 10; i++) scribe.turn();
    const { store: watched, reads } = counted(store);
    const traces = createTraces({ agentId: 'scribe', journal: new MemoryJournal(), store: watched });

    const first = await traces.get('traced');
    const before = statSync(join(dir, 'runs', 'traced.jsonl')).size;
    scribe.turn();
    scribe.end();
    const grown = statSync(join(dir, 'runs', 'traced.jsonl')).size - before;
    const second = await traces.get('traced');
    const listed = await traces.list();

    expect(first?.status).toBe('running');
    expect(second?.status).toBe('done');
    expect(listed.map((summary) => [summary.id, summary.status])).toEqual([['traced', 'done']]);
    expect(reads[0]?.bytes).toBe(before);
    // The second reading took what the run appended since the first; the listing, nothing new.
    expect(reads.slice(1).map((read) => read.bytes)).toEqual([grown, 0]);
  });
});
