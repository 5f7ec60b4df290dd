/**
 * The in-memory journal: a bounded ring that grows with use instead of allocating its whole
 * capacity up front.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import { MemoryJournal } from '../../src/events/memoryJournal.ts';

const entry = (sequence: number, runId = 'run_a'): JournalEntry => ({
  sequence,
  timestamp: 0,
  agentId: 'agent',
  runId,
  iteration: 0,
  event: { type: 'phase.entered', phase: 'reason' },
});

describe('memory journal', () => {
  it('keeps every entry, in order, until it is full', () => {
    const journal = new MemoryJournal(4);
    for (let i = 0; i < 3; i++) journal.write(entry(i));
    expect(journal.entries().map((e) => e.sequence)).toEqual([0, 1, 2]);
    expect(journal.size).toBe(3);
    expect(journal.dropped).toBe(0);
  });

  it('drops the oldest entries beyond its capacity and counts them', () => {
    const journal = new MemoryJournal(3);
    for (let i = 0; i < 8; i++) journal.write(entry(i));
    expect(journal.entries().map((e) => e.sequence)).toEqual([5, 6, 7]);
    expect(journal.size).toBe(3);
    expect(journal.dropped).toBe(5);
  });

  it('knows which runs it holds, and from their start, as entries are dropped', () => {
    const journal = new MemoryJournal(4);
    journal.write(entry(0, 'run_a'));
    journal.write(entry(0, 'run_b'));
    journal.write(entry(1, 'run_a'));
    journal.write(entry(7, 'run_c'));
    expect([journal.has('run_a'), journal.has('run_b'), journal.has('run_x')]).toEqual([true, true, false]);
    expect([journal.firstSequence('run_a'), journal.firstSequence('run_b'), journal.firstSequence('run_c')]).toEqual([0, 0, 7]);
    // Full, no run ended: run_a, holding most, gives its first entry, then (having lost its start) its only one left.
    journal.write(entry(8, 'run_c'));
    expect(journal.has('run_a')).toBe(true);
    expect(journal.firstSequence('run_a')).toBeUndefined();
    journal.write(entry(9, 'run_c'));
    expect(journal.has('run_a')).toBe(false);
    expect(journal.firstSequence('run_b')).toBe(0);
    // run_c now holds most: its oldest goes, and run_b stays whole.
    journal.write(entry(10, 'run_c'));
    expect(journal.firstSequence('run_c')).toBeUndefined();
    expect(journal.entries('run_b').map((e) => e.sequence)).toEqual([0]);
    // A run all of whose entries went is held again from the next one it is given.
    journal.write(entry(2, 'run_a'));
    expect(journal.firstSequence('run_a')).toBe(2);
    expect(journal.entries('run_a').map((e) => e.sequence)).toEqual([2]);
  });

  it("reads a run held from its start from where its first entry is in the ring, after earlier runs' entries were dropped", () => {
    const journal = new MemoryJournal(3);
    for (let i = 0; i < 4; i++) journal.write(entry(i, 'run_x'));
    journal.write(entry(0, 'run_y'));
    journal.write(entry(1, 'run_y'));
    expect(journal.entries('run_y').map((e) => e.sequence)).toEqual([0, 1]);
    expect(journal.entries('run_x').map((e) => e.sequence)).toEqual([3]);
    expect(journal.last('run_y')?.sequence).toBe(1);
    expect(journal.entries('run_z')).toEqual([]);
  });

  it('filters by run across the wrap-around', () => {
    const journal = new MemoryJournal(4);
    for (let i = 0; i < 6; i++) journal.write(entry(i, 'run_a'));
    journal.write(entry(0, 'run_b'));
    expect(journal.entries('run_a').map((e) => e.sequence)).toEqual([3, 4, 5]);
    expect(journal.entries('run_b').map((e) => e.sequence)).toEqual([0]);
  });

  it('gives way from the run that already lost its start, so the run beside it stays whole', () => {
    const journal = new MemoryJournal(4);
    for (let i = 0; i < 6; i++) journal.write(entry(i, i % 2 === 0 ? 'run_a' : 'run_b'));
    expect(journal.entries('run_a').map((e) => e.sequence)).toEqual([4]);
    expect(journal.entries('run_b').map((e) => e.sequence)).toEqual([1, 3, 5]);
    expect(journal.firstSequence('run_b')).toBe(1);
  });

  it('works at capacity 1', () => {
    const journal = new MemoryJournal(1);
    journal.write(entry(0));
    journal.write(entry(1));
    expect(journal.entries().map((e) => e.sequence)).toEqual([1]);
    expect(journal.dropped).toBe(1);
  });

  it('gives back every field as written, across growth past its first columns and a wrap-around', () => {
    const journal = new MemoryJournal(150);
    const written: JournalEntry[] = [];
    for (let i = 0; i < 400; i++) {
      const e: JournalEntry = {
        sequence: i,
        timestamp: 1_795_000_000_000 + i * 0.5,
        agentId: `agent_${i % 3}`,
        runId: 'run_3',
        iteration: i % 11,
        event: i % 2 === 0 ? { type: 'phase.entered', phase: 'act' } : { type: 'observations.collected', count: i, errors: 0 },
      };
      written.push(e);
      journal.write(e);
    }
    expect(journal.entries()).toEqual(written.slice(250));
    expect(journal.entries('run_3')).toEqual(written.slice(250));
    expect(journal.dropped).toBe(250);
  });

  it('last() is the newest entry of a run, or of any run', () => {
    const journal = new MemoryJournal(4);
    expect(journal.last()).toBeUndefined();
    for (let i = 0; i < 6; i++) journal.write(entry(i, i === 3 ? 'run_b' : 'run_a'));
    expect(journal.last()?.sequence).toBe(5);
    expect(journal.last('run_b')?.sequence).toBe(3);
    expect(journal.last('run_c')).toBeUndefined();
  });

  it('rejects a capacity that is not a positive integer', () => {
    expect(() => new MemoryJournal(0)).toThrow(RangeError);
    expect(() => new MemoryJournal(2.5)).toThrow(RangeError);
  });
});

const end = (sequence: number, runId: string): JournalEntry => ({
  ...entry(sequence, runId),
  event: { type: 'run.terminated', reason: 'final_answer', iterations: 1, usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 } },
});

describe('making room when full', () => {
  it('drops ended runs first, whole and the earliest ended first, so a live run keeps its start', () => {
    const journal = new MemoryJournal(10);
    for (let i = 0; i < 3; i++) journal.write(entry(i, 'live'));
    for (let i = 0; i < 2; i++) journal.write(entry(i, 'ended_first'));
    journal.write(end(2, 'ended_first'));
    for (let i = 0; i < 2; i++) journal.write(entry(i, 'ended_later'));
    journal.write(end(2, 'ended_later'));
    journal.write(entry(3, 'live'));
    expect(journal.size).toBe(10);
    journal.write(entry(4, 'live'));
    expect(journal.has('ended_first')).toBe(false);
    expect(journal.entries('ended_later').map((e) => e.sequence)).toEqual([0, 1, 2]);
    for (let i = 5; i < 8; i++) journal.write(entry(i, 'live'));
    expect(journal.has('ended_later')).toBe(false);
    expect(journal.firstSequence('live')).toBe(0);
    expect(journal.entries('live').map((e) => e.sequence)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect([journal.size, journal.dropped]).toEqual([8, 6]);
  });

  it('counts a run that went on after its end (a resume) as live again', () => {
    const journal = new MemoryJournal(6);
    journal.write(entry(0, 'resumed'));
    journal.write(end(1, 'resumed'));
    journal.write(entry(0, 'other'));
    journal.write(end(1, 'other'));
    journal.write(entry(2, 'resumed'));
    journal.write(entry(3, 'resumed'));
    journal.write(entry(4, 'resumed'));
    expect(journal.has('other')).toBe(false);
    expect(journal.entries('resumed').map((e) => e.sequence)).toEqual([0, 1, 2, 3, 4]);
  });

  it('never holds more than its capacity, and gives each run it holds from its start all it was written since (property)', () => {
    const write = fc.record({ run: fc.constantFrom('a', 'b', 'c', 'd'), ends: fc.boolean() });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 24 }), fc.array(write, { maxLength: 200 }), (capacity, writes) => {
        const journal = new MemoryJournal(capacity);
        const since = new Map<string, JournalEntry[]>();
        const all: JournalEntry[] = [];
        writes.forEach(({ run, ends }, i) => {
          const written = ends ? end(i, run) : entry(i, run);
          since.set(run, [...(since.get(run) ?? []), written]);
          all.push(written);
          journal.write(written);
          // A run none of whose entries it held any more is held again from this one.
          if (journal.firstSequence(run) === i) since.set(run, [written]);
          expect(journal.size).toBeLessThanOrEqual(capacity);
          expect(journal.size + journal.dropped).toBe(all.length);
          const held = journal.entries();
          // What it holds is in the order written.
          expect(held.map((e) => e.sequence)).toEqual([...held.map((e) => e.sequence)].sort((x, y) => x - y));
          for (const [runId, entries] of since) {
            const first = journal.firstSequence(runId);
            if (first !== undefined) expect(journal.entries(runId)).toEqual(entries);
            else if (journal.has(runId)) expect(entries.slice(-journal.entries(runId).length)).toEqual(journal.entries(runId));
            else expect(journal.entries(runId)).toEqual([]);
          }
        });
      }),
      { numRuns: 300 },
    );
  });

  it('claims to hold a run from its start only while it holds every entry of the run written since it began holding it, at any capacity (property)', () => {
    // Each run's sequences count up from 0; a run resumed after its end goes on counting.
    const write = fc.record({ run: fc.constantFrom('a', 'b', 'c'), ends: fc.boolean() });
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 4, max: 16 })), fc.array(write, { maxLength: 120 }), (capacity, writes) => {
        const journal = new MemoryJournal(capacity);
        const since = new Map<string, JournalEntry[]>();
        const counts = new Map<string, number>();
        for (const { run, ends } of writes) {
          const sequence = counts.get(run) ?? 0;
          counts.set(run, sequence + 1);
          const written = ends ? end(sequence, run) : entry(sequence, run);
          // A run it held nothing of when this entry came is held afresh from this entry on.
          since.set(run, [...(journal.has(run) ? (since.get(run) ?? []) : []), written]);
          journal.write(written);
          for (const [runId, entries] of since) {
            const first = journal.firstSequence(runId);
            if (first === undefined) continue;
            expect(first).toBe(entries[0]?.sequence);
            expect(journal.entries(runId)).toEqual(entries);
          }
        }
      }),
      { numRuns: 1_000 },
    );
  });
});

describe("following a run's entries", () => {
  it('delivers only that run’s entries written after the subscription, to each of its subscribers, even once they fell out of the ring', () => {
    const journal = new MemoryJournal(2);
    journal.write(entry(0, 'r1'));
    const first: number[] = [];
    const second: number[] = [];
    const other: number[] = [];
    journal.follow('r1').subscribe((e) => first.push(e.sequence));
    journal.follow('r1').subscribe((e) => second.push(e.sequence));
    journal.follow('r2').subscribe((e) => other.push(e.sequence));
    for (const [sequence, runId] of [[1, 'r1'], [2, 'r3'], [3, 'r2'], [4, 'r1'], [5, 'r3'], [6, 'r3']] as const) journal.write(entry(sequence, runId));
    expect(first).toEqual([1, 4]);
    expect(second).toEqual([1, 4]);
    expect(other).toEqual([3]);
  });

  it('keeps delivering after every subscriber left and a new one came, and to the rest when one leaves mid-delivery', () => {
    const journal = new MemoryJournal();
    const seen: number[] = [];
    journal.follow('r').subscribe().unsubscribe();
    journal.write(entry(0, 'r'));
    const leaving = journal.follow('r').subscribe(() => leaving.unsubscribe());
    journal.follow('r').subscribe((e) => seen.push(e.sequence));
    journal.write(entry(1, 'r'));
    journal.write(entry(2, 'r'));
    expect(seen).toEqual([1, 2]);
    expect(leaving.closed).toBe(true);
  });

  it('gives each run what entries(runId) gains, in the same order, across many interleaved runs', () => {
    const journal = new MemoryJournal();
    const followed = new Map<string, number[]>();
    for (const runId of ['a', 'b', 'c']) {
      const seen: number[] = [];
      followed.set(runId, seen);
      journal.follow(runId).subscribe((e) => seen.push(e.sequence));
    }
    for (let i = 0; i < 60; i++) journal.write(entry(i, i % 4 === 3 ? 'd' : (['a', 'b', 'c'] as const)[i % 3]));
    for (const [runId, seen] of followed) expect(seen).toEqual(journal.entries(runId).map((e) => e.sequence));
  });
});
