/**
 * A bounded in-memory journal: a ring buffer of the most recent entries, with a count of what
 * it had to drop. O(1) per entry, no copying of earlier entries.
 *
 * Stored by column, not as the entry objects it is given: each slot keeps the event and two
 * string references in plain arrays and its three numbers in a Float64Array. The entry object
 * (and its boxed timestamp) then dies young instead of living until the ring wraps, so a
 * journal holds one object per entry rather than three, and the garbage collector has a third
 * as many long-lived objects to copy and mark. {@link entries} builds entry objects on demand.
 * The columns grow with use up to `capacity`: an agent that never fills its journal (most of
 * them) does not pay for 10 000 empty slots.
 */
import type { JournalEntry, LoopEvent } from '../core/loopEvent.ts';

const INITIAL_SLOTS = 64;

export class MemoryJournal {
  readonly #events: LoopEvent[] = [];
  readonly #agentIds: string[] = [];
  readonly #runIds: string[] = [];
  /** sequence, timestamp, iteration of slot i at 3i, 3i+1, 3i+2. */
  #numbers = new Float64Array(0);
  #start = 0;
  #size = 0;
  #dropped = 0;
  /** Entries ever written: an entry's position is its count at the time. */
  #written = 0;
  /**
   * Per run with entries held: how many, and the sequence and position of the first one written
   * while none of its entries has been dropped since (first -1 once some were), so a web request
   * can ask whether a run is here, and from its start, and read its entries, without scanning
   * the ring before them.
   */
  readonly #runs = new Map<string, { held: number; first: number; from: number }>();

  constructor(readonly capacity = 10_000) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('MemoryJournal capacity must be a positive integer.');
  }

  /** Append an entry; the oldest is dropped when full. The journal keeps its fields, not the object. */
  readonly write = (entry: JournalEntry): void => {
    let slot: number;
    if (this.#size < this.capacity) {
      // Not full yet, so nothing was dropped and the oldest entry is still at index 0.
      slot = this.#size++;
      if (3 * this.#size > this.#numbers.length) this.#grow();
      this.#events.push(entry.event);
      this.#agentIds.push(entry.agentId);
      this.#runIds.push(entry.runId);
    } else {
      slot = this.#start;
      this.#start = (this.#start + 1) % this.capacity;
      this.#dropped++;
      this.#forget(this.#runIds[slot] as string);
      this.#events[slot] = entry.event;
      this.#agentIds[slot] = entry.agentId;
      this.#runIds[slot] = entry.runId;
    }
    const run = this.#runs.get(entry.runId);
    if (run === undefined) this.#runs.set(entry.runId, { held: 1, first: entry.sequence, from: this.#written });
    else run.held++;
    this.#written++;
    const numbers = this.#numbers;
    numbers[3 * slot] = entry.sequence;
    numbers[3 * slot + 1] = entry.timestamp;
    numbers[3 * slot + 2] = entry.iteration;
  };

  /** Entries oldest first, optionally only one run's. New objects on every call. */
  entries(runId?: string): JournalEntry[] {
    const out: JournalEntry[] = [];
    const run = runId === undefined ? undefined : this.#runs.get(runId);
    if (runId !== undefined && run === undefined) return out;
    // A run held from its first entry starts where that entry was written: the ring before it is not its.
    const begin = run !== undefined && run.first >= 0 ? run.from - this.#dropped : 0;
    for (let i = begin; i < this.#size; i++) {
      const slot = (this.#start + i) % this.capacity;
      if (runId === undefined || this.#runIds[slot] === runId) out.push(this.#entry(slot));
    }
    return out;
  }

  /** The newest entry (of one run), without building the others; undefined when there is none. */
  last(runId?: string): JournalEntry | undefined {
    if (runId !== undefined && !this.#runs.has(runId)) return undefined;
    for (let i = this.#size - 1; i >= 0; i--) {
      const slot = (this.#start + i) % this.capacity;
      if (runId === undefined || this.#runIds[slot] === runId) return this.#entry(slot);
    }
    return undefined;
  }

  /** Whether it holds any entry of `runId`. */
  has(runId: string): boolean {
    return this.#runs.has(runId);
  }

  /**
   * The sequence of `runId`'s oldest entry held, when it still holds every entry of the run it
   * was given; undefined when it holds none or dropped some (its oldest is then unknown without a scan).
   */
  firstSequence(runId: string): number | undefined {
    const first = this.#runs.get(runId)?.first;
    return first === undefined || first < 0 ? undefined : first;
  }

  get size(): number {
    return this.#size;
  }

  /** Entries dropped because the buffer was full. */
  get dropped(): number {
    return this.#dropped;
  }

  #entry(slot: number): JournalEntry {
    const numbers = this.#numbers;
    return {
      sequence: numbers[3 * slot] as number,
      timestamp: numbers[3 * slot + 1] as number,
      agentId: this.#agentIds[slot] as string,
      runId: this.#runIds[slot] as string,
      iteration: numbers[3 * slot + 2] as number,
      event: this.#events[slot] as LoopEvent,
    };
  }

  /** One entry of `runId` was dropped: its run is no longer held from its start, or not at all. */
  #forget(runId: string): void {
    const run = this.#runs.get(runId);
    if (run === undefined) return;
    if (--run.held === 0) this.#runs.delete(runId);
    else run.first = -1;
  }

  /** Double the number columns (at least {@link INITIAL_SLOTS} slots, at most `capacity`). */
  #grow(): void {
    const slots = Math.min(this.capacity, Math.max(INITIAL_SLOTS, (this.#numbers.length / 3) * 2));
    const numbers = new Float64Array(3 * slots);
    numbers.set(this.#numbers);
    this.#numbers = numbers;
  }
}
