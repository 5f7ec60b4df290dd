/**
 * The protocol-neutral core of serving a run to a web page: a run's journal entries from its
 * first on, then its live tail, ending with the `run.terminated` entry that ends what the journal
 * holds. Every protocol encodes this one feed, so a page that reconnects is served from the
 * journal and never from a buffer only the first connection had.
 */
import { map, Observable, type OperatorFunction, type Subscriber } from 'rxjs';
import type { Agent } from '../agent/types.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
import type { RunStore } from '../persistence/fileStore.ts';
import { WebRequestError } from './errors.ts';
import { StoreError } from '../persistence/errors.ts';

/** A run's journal as some store keeps it; empty when it has no such run. */
export type JournalReader = (runId: string) => readonly JournalEntry[] | Promise<readonly JournalEntry[]>;

/** Where a run's entries are read from: this process's agent, else where its runs are kept. */
export interface FeedSource {
  readonly agent: Agent;
  /** Runs of other processes (or ones this process's journal dropped) are read with it. */
  readonly read?: JournalReader;
  /** How often a run read with `read` is read again while it has not ended. */
  readonly pollIntervalMs: number;
}

/** A file store's journals as a reader. */
export function storeReader(store: RunStore): JournalReader {
  return (runId) => {
    try {
      return store.readJournal(runId).entries;
    } catch (error) {
      if (error instanceof StoreError && error.code === 'run_not_found') return [];
      throw error;
    }
  };
}

const ended = (entry: JournalEntry): boolean => entry.event.type === 'run.terminated';

/**
 * A run's entries from its first, then live, completing after the `run.terminated` that is its
 * last entry so far. A run resumed after a resumable failure has an earlier `run.terminated` with
 * entries after it: that end was superseded and is left out, so the feed goes on to the final end
 * (and a page never sees a failure the run came back from). Only entries `keep` keeps are fed. Rejects with WebRequestError (404)
 * for a run neither the agent's journal nor `read` has, unless it was just `started` here.
 *
 * @example
 * ```ts
 * (await runFeed({ agent, read: storeReader(store), pollIntervalMs: 1000 }, runId)).subscribe(send);
 * ```
 */
export async function runFeed(source: FeedSource, runId: string, started = false, keep: (entry: JournalEntry) => boolean = () => true): Promise<Observable<JournalEntry>> {
  const { agent, read } = source;
  // The in-memory journal serves a run only while it still holds the run's first entry.
  if (agent.journal.firstSequence(runId) === 0) {
    // The journal so far is one batch: an end inside it that later entries follow was resumed from.
    // Each live entry is a batch of its own, fed without an array or operator of its own: this is
    // the path every streamed token takes.
    return new Observable<JournalEntry>((subscriber) => {
      const ends = endsOf(subscriber);
      ends.batch(agent.journal.entries(runId).filter(keep));
      if (subscriber.closed) return undefined;
      const subscription = agent.events$.subscribe({
        next(entry) {
          if (entry.runId === runId && keep(entry)) ends.one(entry);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
      return () => subscription.unsubscribe();
    });
  }
  if (read === undefined) throw new WebRequestError(404, `No run ${runId} on agent ${agent.id}: start one with a POST, or give the handler the agent's store to serve runs of other processes.`);
  const initial = await read(runId);
  // A run just started elsewhere (a durable one, queued for a worker) has no entries yet: it is read until it has.
  if (initial.length === 0 && !started) throw new WebRequestError(404, `No run ${runId} in the agent's store: start one with a POST.`, { runId });
  return storedFeed(read, runId, initial, source.pollIntervalMs).pipe(
    map((batch) => batch.filter(keep)),
    untilLastEnd(),
  );
}

/** A stored run's entries, each read a batch, read again every `pollIntervalMs` until unsubscribed (another process may be running it). */
function storedFeed(read: JournalReader, runId: string, initial: readonly JournalEntry[], pollIntervalMs: number): Observable<readonly JournalEntry[]> {
  return new Observable<readonly JournalEntry[]>((subscriber) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const emit = (entries: readonly JournalEntry[]): void => {
      subscriber.next(entries);
      // The run's end closed the subscriber (`untilLastEnd` below), and with it the reading.
      if (subscriber.closed) return;
      timer = setTimeout(() => {
        Promise.resolve()
          .then(() => read(runId))
          .then(emit, (error: unknown) => subscriber.error(error));
      }, pollIntervalMs);
    };
    emit(initial);
    return () => clearTimeout(timer);
  });
}
/**
 * Batches of entries as one feed: each sequence once, in order (a source read again, or a journal
 * and a bus that overlap, never repeats an entry), without the ends later entries of the same
 * batch supersede, completing after an end that closes its batch.
 */
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

/** `untilLastEnd`'s state for one subscriber: batches, or single entries (each a batch of one). */
function endsOf(subscriber: Subscriber<JournalEntry>): { batch(entries: readonly JournalEntry[]): void; one(entry: JournalEntry): void } {
  let last = -1;
  return {
    batch(entries) {
      const fresh = entries.filter((entry) => entry.sequence > last);
      for (let i = 0; i < fresh.length && !subscriber.closed; i++) {
        const entry = fresh[i] as JournalEntry;
        last = entry.sequence;
        const final = i === fresh.length - 1;
        if (ended(entry) && !final) continue;
        subscriber.next(entry);
        if (ended(entry)) subscriber.complete();
      }
    },
    one(entry) {
      if (entry.sequence <= last || subscriber.closed) return;
      last = entry.sequence;
      subscriber.next(entry);
      if (ended(entry)) subscriber.complete();
    },
  };
}
