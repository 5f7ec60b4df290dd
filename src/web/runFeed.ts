// Every protocol encodes this one feed, so a page that reconnects is served from the journal, never
// from a buffer only the first connection had.
import { filter, map, Observable, type OperatorFunction, type Subscriber } from 'rxjs';
import type { Agent } from '../agent/types.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
import type { RunStore } from '../persistence/fileStore.ts';
import { WebRequestError } from './errors.ts';
import { StoreError } from '../persistence/errors.ts';
import { RUN_ID_PATTERN } from '../persistence/records.ts';
import { liveDelta, LiveCalls } from '../events/liveDeltas.ts';

/** Empty when the store has no such run. `after`: the feed has the entries up to it; the rest is all it needs (more is harmless). */
export type JournalReader = (runId: string, after?: number) => readonly JournalEntry[] | Promise<readonly JournalEntry[]>;

export interface FeedSource {
  readonly agent: Agent;
  /** Runs of other processes (or ones this process's journal dropped) are read with it. */
  readonly read?: JournalReader;
  readonly pollIntervalMs: number;
  /** Applied to each entry on its way out (the handler's redaction), in the feed rather than an operator after it. */
  readonly prepare?: (entry: JournalEntry) => JournalEntry;
  /**
   * The agent's runs also advance in other processes (a durable runtime): this process's journal
   * may lack their next steps, so a run is always read with `read`, again as soon as the agent's
   * own feed says it moved.
   */
  readonly everywhere?: boolean;
}

export function storeReader(store: RunStore): JournalReader {
  return (runId, after) => {
    // A run id the store cannot name a file by (a page's URL may say anything) is no run of it.
    if (!RUN_ID_PATTERN.test(runId)) return [];
    try {
      return store.readJournal(runId, after === undefined ? {} : { after }).entries;
    } catch (error) {
      if (error instanceof StoreError && error.code === 'run_not_found') return [];
      throw error;
    }
  };
}

const same = (entry: JournalEntry): JournalEntry => entry;
const ended = (entry: JournalEntry): boolean => entry.event.type === 'run.terminated';

/** An earlier `run.terminated` a resumed run went on after is left out: a page never sees a failure the run came back from. */
export async function runFeed(source: FeedSource, runId: string, started = false, keep: (entry: JournalEntry) => boolean = () => true): Promise<Observable<JournalEntry>> {
  const { agent, read, prepare = same } = source;
  // The in-memory journal serves a run only while it still holds the run's first entry.
  if (source.everywhere !== true && agent.journal.firstSequence(runId) === 0) {
    // The journal so far is one batch: an end inside it that later entries follow was resumed from.
    return new Observable<JournalEntry>((subscriber) => {
      const ends = endsOf(subscriber);
      ends.batch(agent.journal.entries(runId).filter(keep).map(prepare));
      if (subscriber.closed) return undefined;
      // Listened to, not subscribed: a streamed token passes through one Observable on its way to the reader, not two.
      return agent.journal.listen(runId, (entry) => {
        try {
          if (keep(entry)) ends.one(prepare(entry));
        } catch (error) {
          subscriber.error(error);
        }
      });
    });
  }
  if (read === undefined && (agent.journal.has(runId) || agent.handle(runId) !== undefined)) {
    throw new WebRequestError(
      410,
      `Run ${runId}'s first entries are no longer in this process's journal (it holds observe.journalCapacity entries, each streamed token one, and drops live runs' entries only once ended runs' are gone): ` +
        "give the handler the agent's store (options.store) to serve it from there, or raise the capacity.",
      { runId },
    );
  }
  if (read === undefined) throw new WebRequestError(404, `No run ${runId} on agent ${agent.id}: start one with a POST, or give the handler the agent's store to serve runs of other processes.`);
  const initial = await read(runId);
  // A run just started elsewhere (a durable one, queued for a worker) has no entries yet: it is read until it has.
  if (initial.length === 0 && !started) throw new WebRequestError(404, `No run ${runId} in the agent's store: start one with a POST.`, { runId });
  const moved = source.everywhere === true ? agent.events$.pipe(filter((entry) => entry.runId === runId)) : undefined;
  return storedFeed(read, runId, initial, source.pollIntervalMs, moved).pipe(
    map((batch) => batch.filter(keep).map(prepare)),
    untilLastEnd(),
  );
}

/**
 * Read again until unsubscribed (another process may be running it): every `pollIntervalMs`, and whenever
 * `moved` brings a committed entry. The deltas a worker streams come with it and wait for a read in progress,
 * which may hold the reply of the call before theirs, and for the step their call began in, read first as the
 * journal has it first (a step's notice may come after them).
 */
function storedFeed(read: JournalReader, runId: string, initial: readonly JournalEntry[], pollIntervalMs: number, moved?: Observable<JournalEntry>): Observable<readonly JournalEntry[]> {
  return new Observable<readonly JournalEntry[]>((subscriber) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let reading = false;
    let again = false;
    const live: JournalEntry[] = [];
    const passLive = (): void => {
      if (reading || live.length === 0 || subscriber.closed) return;
      const ahead = live.findIndex((entry) => entry.sequence > after);
      if (ahead !== 0) subscriber.next(live.splice(0, ahead < 0 ? live.length : ahead));
    };
    // Read again from here, not from the start: a long run is not read once per step.
    let after = -1;
    /** The step the deltas waiting are of, read for once: until a read has it, the polls go on (not a read per delta). */
    let wanted = -1;
    const readNow = (): void => {
      clearTimeout(timer);
      // One read at a time; a move meanwhile reads once more after it.
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      Promise.resolve()
        .then(() => read(runId, after))
        .then(
          (entries) => {
            reading = false;
            emitRead(entries);
            if (again && !subscriber.closed) {
              again = false;
              readNow();
            }
            passLive();
          },
          (error: unknown) => subscriber.error(error),
        );
    };
    /** Deltas that waited for the read go before what it holds after their call began: their own reply would leave them stale. */
    const emitRead = (entries: readonly JournalEntry[]): void => {
      const began = live[0]?.sequence;
      const cut = began === undefined ? -1 : entries.findIndex((entry) => entry.sequence > began);
      if (cut < 0) return emit(entries);
      if (cut > 0) emit(entries.slice(0, cut));
      passLive();
      emit(entries.slice(cut));
    };
    const emit = (entries: readonly JournalEntry[]): void => {
      for (const entry of entries) after = Math.max(after, entry.sequence);
      subscriber.next(entries);
      // The run's end closed the subscriber (`untilLastEnd` below), and with it the reading.
      if (subscriber.closed) return;
      clearTimeout(timer);
      timer = setTimeout(readNow, pollIntervalMs);
    };
    emit(initial);
    // After what was read: a call in flight's deltas so far, which come at once, follow its run's earlier entries.
    const wake = subscriber.closed
      ? undefined
      : moved?.subscribe((entry) => {
          if (liveDelta(entry) === undefined) return readNow();
          live.push(entry);
          if (entry.sequence <= after) return passLive();
          if (entry.sequence > wanted) readNow();
          wanted = Math.max(wanted, entry.sequence);
        });
    return () => {
      clearTimeout(timer);
      wake?.unsubscribe();
    };
  });
}
/** Each sequence once (a source read again, or a journal and a bus that overlap), without ends later entries supersede. */
export function untilLastEnd(): OperatorFunction<readonly JournalEntry[], JournalEntry> {
  return (source) =>
    new Observable<JournalEntry>((subscriber) => {
      const ends = endsOf(subscriber);
      const subscription = source.subscribe({
        next: (batch) => ends.batch(batch),
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
      return () => subscription.unsubscribe();
    });
}

function endsOf(subscriber: Subscriber<JournalEntry>): { batch(entries: readonly JournalEntry[]): void; one(entry: JournalEntry): void } {
  let last = -1;
  // A worker's streamed deltas have no sequence of their own: they pass while their call is on.
  const calls = new LiveCalls();
  const live = (entry: JournalEntry): boolean => {
    if (liveDelta(entry) === undefined) return false;
    if (calls.admit(entry) && !subscriber.closed) subscriber.next(entry);
    return true;
  };
  return {
    batch(entries) {
      const fresh = entries.filter((entry) => entry.sequence > last || liveDelta(entry) !== undefined);
      const lastCommitted = fresh.findLastIndex((entry) => liveDelta(entry) === undefined);
      for (let i = 0; i < fresh.length && !subscriber.closed; i++) {
        const entry = fresh[i] as JournalEntry;
        if (live(entry)) continue;
        last = entry.sequence;
        const final = i === lastCommitted;
        if (ended(entry) && !final) continue;
        calls.committed(entry);
        subscriber.next(entry);
        if (ended(entry)) subscriber.complete();
      }
    },
    one(entry) {
      if (live(entry) || entry.sequence <= last || subscriber.closed) return;
      last = entry.sequence;
      calls.committed(entry);
      subscriber.next(entry);
      if (ended(entry)) subscriber.complete();
    },
  };
}
