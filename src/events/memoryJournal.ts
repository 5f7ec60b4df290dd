/**
 * A bounded in-memory journal: a ring buffer of the most recent entries, with a count of what
 * it had to drop. O(1) per entry, no copying of earlier entries. The buffer grows with use up
 * to `capacity` instead of being allocated up front: an agent that never fills it (most of
 * them) does not pay 80 KB for 10 000 empty slots.
 */
import type { JournalEntry } from './loopEvent.ts';

export class MemoryJournal {
  readonly #buffer: JournalEntry[] = [];
  #start = 0;
  #size = 0;
  #dropped = 0;

  constructor(readonly capacity = 10_000) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('MemoryJournal capacity must be a positive integer.');
  }

  /** Append an entry; the oldest is dropped when full. */
  readonly write = (entry: JournalEntry): void => {
    if (this.#size < this.capacity) {
      // Not full yet, so nothing was dropped and the oldest entry is still at index 0.
      this.#buffer.push(entry);
      this.#size++;
    } else {
      this.#buffer[this.#start] = entry;
      this.#start = (this.#start + 1) % this.capacity;
      this.#dropped++;
    }
  };

  /** Entries oldest first, optionally only one run's. */
  entries(runId?: string): JournalEntry[] {
    const out: JournalEntry[] = [];
    for (let i = 0; i < this.#size; i++) {
      const entry = this.#buffer[(this.#start + i) % this.capacity] as JournalEntry;
      if (runId === undefined || entry.runId === runId) out.push(entry);
    }
    return out;
  }

  get size(): number {
    return this.#size;
  }

  /** Entries dropped because the buffer was full. */
  get dropped(): number {
    return this.#dropped;
  }
}
