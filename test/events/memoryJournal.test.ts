/**
 * The in-memory journal: a bounded ring that grows with use instead of allocating its whole
 * capacity up front.
 */
import { describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../src/events/loopEvent.ts';
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

  it('filters by run across the wrap-around', () => {
    const journal = new MemoryJournal(4);
    for (let i = 0; i < 6; i++) journal.write(entry(i, i % 2 === 0 ? 'run_a' : 'run_b'));
    expect(journal.entries('run_a').map((e) => e.sequence)).toEqual([2, 4]);
    expect(journal.entries('run_b').map((e) => e.sequence)).toEqual([3, 5]);
  });

  it('works at capacity 1', () => {
    const journal = new MemoryJournal(1);
    journal.write(entry(0));
    journal.write(entry(1));
    expect(journal.entries().map((e) => e.sequence)).toEqual([1]);
    expect(journal.dropped).toBe(1);
  });

  it('rejects a capacity that is not a positive integer', () => {
    expect(() => new MemoryJournal(0)).toThrow(RangeError);
    expect(() => new MemoryJournal(2.5)).toThrow(RangeError);
  });
});
