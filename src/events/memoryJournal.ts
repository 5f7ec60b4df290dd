/**
 * A ring buffer stored by column, so the entry objects it is given die young; entries are rebuilt on demand.
 * When full it makes room from ended runs first, then from the live run holding most: a page reconnecting
 * to a live run is served from its first entry while the live runs fit, however much ended runs wrote.
 */
import { Observable } from 'rxjs';
import type { JournalEntry, LoopEvent } from '../core/loopEvent.ts';

const INITIAL_SLOTS = 64;
/** Numbers kept per entry: sequence, timestamp, iteration and its place among all written. */
const STRIDE = 4;

/** Entries written by every journal of this process so far: a place orders entries of different runs as they were written. */
let writtenInProcess = 0;
const places = new WeakMap<JournalEntry, number>();

/**
 * Where `entry` was written among every entry the journals of this process wrote, for an entry a journal's
 * `entries()` gave; undefined for any other (one read from a store). Runs read side by side are put back in
 * the order they ran with it.
 */
export const writtenPlace = (entry: JournalEntry): number | undefined => places.get(entry);

/** Called with each entry of a followed run as it is written. */
export type EntryListener = (entry: JournalEntry) => void;

interface HeldRun {
  held: number;
  first: number;
  from: number;
  ended: number;
}

export class MemoryJournal {
  #events: LoopEvent[] = [];
  #agentIds: string[] = [];
  #runIds: string[] = [];
  /** sequence, timestamp, iteration and place written of slot i at 4i to 4i+3. */
  #numbers = new Float64Array(0);
  #start = 0;
  #size = 0;
  #dropped = 0;
  #written = 0;
  /**
   * Per run held: its count, and its first sequence and position while none dropped (-1 after), so reading a run
   * skips the ring before it; `ended`, when its last entry ended it, that entry's place among all written (-1 while live).
   */
  readonly #runs = new Map<string, HeldRun>();
  /** Each followed run's listeners: an entry reaches its own run's, not every run's. */
  readonly #followers = new Map<string, readonly EntryListener[]>();

  constructor(readonly capacity = 10_000) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('MemoryJournal capacity must be a positive integer.');
  }

  readonly write = (entry: JournalEntry): void => {
    let slot: number;
    // Making room for this entry may drop the rest of its own run: the run is then not held from its start.
    const known = this.#runs.has(entry.runId);
    if (this.#size === this.capacity && !this.#oldestGoes()) this.#makeRoom();
    if (this.#size < this.capacity) {
      // Not full: the oldest entry is at index 0 (nothing was dropped yet, or making room moved what it kept to the front).
      slot = this.#size++;
      if (STRIDE * this.#size > this.#numbers.length) this.#grow();
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
    const ended = entry.event.type === 'run.terminated' ? this.#written : -1;
    const run = this.#runs.get(entry.runId);
    if (run === undefined) this.#runs.set(entry.runId, { held: 1, first: known ? -1 : entry.sequence, from: this.#written, ended });
    else {
      run.held++;
      // A run resumed after its end is live again.
      run.ended = ended;
    }
    this.#written++;
    const numbers = this.#numbers;
    numbers[STRIDE * slot] = entry.sequence;
    numbers[STRIDE * slot + 1] = entry.timestamp;
    numbers[STRIDE * slot + 2] = entry.iteration;
    numbers[STRIDE * slot + 3] = writtenInProcess++;
    const followers = this.#followers.size === 0 ? undefined : this.#followers.get(entry.runId);
    if (followers !== undefined) for (let i = 0; i < followers.length; i++) (followers[i] as EntryListener)(entry);
  };

  /**
   * `runId`'s entries as they are written from now on (`entries(runId)` has those before). With
   * many runs followed at once, an entry costs only its own run's subscribers.
   */
  follow(runId: string): Observable<JournalEntry> {
    return new Observable<JournalEntry>((subscriber) => this.listen(runId, (entry) => subscriber.next(entry)));
  }

  /**
   * `follow` without an Observable between the journal and `next`, for a reader that takes every streamed
   * token; `next` must not throw. Returns the way to stop.
   */
  listen(runId: string, next: EntryListener): () => void {
    // Replaced, never changed in place: a delivery under way goes on over the list it started with.
    this.#followers.set(runId, [...(this.#followers.get(runId) ?? []), next]);
    let listening = true;
    return () => {
      const now = this.#followers.get(runId) ?? [];
      const at = now.indexOf(next);
      if (!listening || at < 0) return;
      listening = false;
      // The same function listening twice stops once per call.
      const rest = [...now.slice(0, at), ...now.slice(at + 1)];
      if (rest.length === 0) this.#followers.delete(runId);
      else this.#followers.set(runId, rest);
    };
  }

  entries(runId?: string): JournalEntry[] {
    const out: JournalEntry[] = [];
    const run = runId === undefined ? undefined : this.#runs.get(runId);
    if (runId !== undefined && run === undefined) return out;
    // A run held from its first entry starts where that entry was written: the ring before it is not its.
    const begin = run !== undefined && run.first >= 0 ? run.from - this.#dropped : 0;
    for (let i = begin; i < this.#size; i++) {
      const slot = (this.#start + i) % this.capacity;
      if (runId === undefined || this.#runIds[slot] === runId) {
        const entry = this.#entry(slot);
        places.set(entry, this.#numbers[STRIDE * slot + 3] as number);
        out.push(entry);
      }
    }
    return out;
  }

  last(runId?: string): JournalEntry | undefined {
    if (runId !== undefined && !this.#runs.has(runId)) return undefined;
    for (let i = this.#size - 1; i >= 0; i--) {
      const slot = (this.#start + i) % this.capacity;
      if (runId === undefined || this.#runIds[slot] === runId) return this.#entry(slot);
    }
    return undefined;
  }

  has(runId: string): boolean {
    return this.#runs.has(runId);
  }

  /** Undefined when some of the run's entries were dropped: its oldest is then unknown without a scan. */
  firstSequence(runId: string): number | undefined {
    const first = this.#runs.get(runId)?.first;
    return first === undefined || first < 0 ? undefined : first;
  }

  get size(): number {
    return this.#size;
  }

  get dropped(): number {
    return this.#dropped;
  }

  #entry(slot: number): JournalEntry {
    const numbers = this.#numbers;
    return {
      sequence: numbers[STRIDE * slot] as number,
      timestamp: numbers[STRIDE * slot + 1] as number,
      agentId: this.#agentIds[slot] as string,
      runId: this.#runIds[slot] as string,
      iteration: numbers[STRIDE * slot + 2] as number,
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

  /** The oldest entry can go as the ring turns: its run ended or lost its start already, or no other run should give way first. */
  #oldestGoes(): boolean {
    const oldest = this.#runs.get(this.#runIds[this.#start] as string) as HeldRun;
    if (oldest.ended >= 0 || oldest.first < 0) return true;
    for (const run of this.#runs.values()) if (run.ended >= 0 || run.first < 0 || run.held > oldest.held) return false;
    return true;
  }

  /**
   * Drops ended runs whole, the earliest ended first; without any, live runs' oldest entries, from runs that lost
   * their start already, then from the run holding most. At least an eighth of the ring is freed unless only ended
   * runs go, so the copy this costs is spread over many writes.
   */
  #makeRoom(): void {
    const target = Math.max(1, Math.floor(this.capacity / 8));
    const drop = new Map<string, number>();
    let freed = 0;
    const ended = [...this.#runs].filter(([, run]) => run.ended >= 0).sort(([, a], [, b]) => a.ended - b.ended);
    for (const [runId, run] of ended) {
      if (freed >= target) break;
      drop.set(runId, run.held);
      freed += run.held;
    }
    if (freed === 0) {
      const live = [...this.#runs].sort(([, a], [, b]) => (a.first < 0) !== (b.first < 0) ? (a.first < 0 ? -1 : 1) : b.held - a.held);
      for (const [runId, run] of live) {
        if (freed >= target) break;
        const count = Math.min(run.held, target - freed);
        drop.set(runId, count);
        freed += count;
      }
    }
    // Kept entries only move towards the front: unless the ring wraps, they are moved within its own columns.
    const inPlace = this.#start === 0;
    const events = inPlace ? this.#events : [];
    const agentIds = inPlace ? this.#agentIds : [];
    const runIds = inPlace ? this.#runIds : [];
    const from = this.#numbers;
    const numbers = inPlace ? from : new Float64Array(from.length);
    let kept = 0;
    const dropped = this.#dropped + freed;
    const placed = new Set<string>();
    // A run's entries mostly follow each other (its streamed tokens): it is looked up once per stretch.
    let runId: string | undefined;
    let left = 0;
    for (let i = 0; i < this.#size; i++) {
      const slot = (this.#start + i) % this.capacity;
      const id = this.#runIds[slot] as string;
      if (id !== runId) {
        if (runId !== undefined) drop.set(runId, left);
        runId = id;
        left = drop.get(id) ?? 0;
        // A run held from its start lost nothing here: it is read from where its first entry now is.
        if (left === 0 && !placed.has(id)) {
          placed.add(id);
          const run = this.#runs.get(id) as HeldRun;
          if (run.first >= 0) run.from = dropped + kept;
        }
      }
      if (left > 0) {
        left--;
        this.#forget(id);
        continue;
      }
      const at = kept++;
      events[at] = this.#events[slot] as LoopEvent;
      agentIds[at] = this.#agentIds[slot] as string;
      runIds[at] = id;
      for (let k = 0; k < STRIDE; k++) numbers[STRIDE * at + k] = from[STRIDE * slot + k] as number;
    }
    events.length = kept;
    agentIds.length = kept;
    runIds.length = kept;
    this.#events = events;
    this.#agentIds = agentIds;
    this.#runIds = runIds;
    this.#numbers = numbers;
    this.#start = 0;
    this.#size = kept;
    this.#dropped = dropped;
  }

  #grow(): void {
    const slots = Math.min(this.capacity, Math.max(INITIAL_SLOTS, (this.#numbers.length / STRIDE) * 2));
    const numbers = new Float64Array(STRIDE * slots);
    numbers.set(this.#numbers);
    this.#numbers = numbers;
  }
}
