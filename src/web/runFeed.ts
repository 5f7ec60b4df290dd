/**
 * The protocol-neutral core of serving a run to a web page: a run's journal entries from its
 * first on, then its live tail, ending with its `run.terminated` entry. Every protocol encodes
 * this one feed, so a page that reconnects is served from the journal and never from a buffer
 * only the first connection had.
 */
import { concat, defer, filter, from, Observable, takeWhile } from 'rxjs';
import type { Agent } from '../agent/types.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
import type { RunStore } from '../persistence/fileStore.ts';
import { RunNotFoundError } from '../persistence/errors.ts';
import { WebRequestError } from './errors.ts';

/** Where a run's entries are read from: this process's agent, else the store its runs are kept in. */
export interface FeedSource {
  readonly agent: Agent;
  /** The agent's store: runs of other processes (or ones this process's journal dropped) are read from it. */
  readonly store?: RunStore;
  /** How often a run read from the store is read again while it has not ended. */
  readonly pollIntervalMs: number;
}

const ended = (entry: JournalEntry): boolean => entry.event.type === 'run.terminated';

/**
 * A run's entries from its first, then live, completing after `run.terminated`. Throws
 * WebRequestError (404) for a run neither the agent's journal nor the store has.
 *
 * @example
 * ```ts
 * runFeed({ agent, store, pollIntervalMs: 1000 }, runId).subscribe((entry) => send(entry));
 * ```
 */
export function runFeed(source: FeedSource, runId: string): Observable<JournalEntry> {
  const { agent, store } = source;
  // The in-memory journal serves a run only while it still holds the run's first entry.
  const first = agent.journal.entries(runId)[0];
  if (first?.sequence === 0) {
    const live = defer(() => concat(from(agent.journal.entries(runId)), agent.events$.pipe(filter((entry) => entry.runId === runId))));
    return live.pipe(inOrder(), takeWhile((entry) => !ended(entry), true));
  }
  if (store === undefined) throw new WebRequestError(404, `No run ${runId} on agent ${agent.id}: start one with a POST, or give the handler the agent's store to serve runs of other processes.`);
  const initial = readStored(store, runId);
  return storedFeed(store, runId, initial, source.pollIntervalMs).pipe(inOrder(), takeWhile((entry) => !ended(entry), true));
}

function readStored(store: RunStore, runId: string): readonly JournalEntry[] {
  try {
    return store.readJournal(runId).entries;
  } catch (error) {
    if (error instanceof RunNotFoundError) throw new WebRequestError(404, `No run ${runId} in the store at ${store.dir}.`, { runId });
    throw error;
  }
}

/** A stored run's entries, read again every `pollIntervalMs` until its end is written (another process may be running it). */
function storedFeed(store: RunStore, runId: string, initial: readonly JournalEntry[], pollIntervalMs: number): Observable<JournalEntry> {
  return new Observable<JournalEntry>((subscriber) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let entries = initial;
    const tick = (): void => {
      for (const entry of entries) subscriber.next(entry);
      if (subscriber.closed || entries.some(ended)) return subscriber.complete();
      timer = setTimeout(() => {
        try {
          entries = store.readJournal(runId).entries;
        } catch (error) {
          return subscriber.error(error);
        }
        tick();
      }, pollIntervalMs);
    };
    tick();
    return () => clearTimeout(timer);
  });
}

/** Each sequence once, in order: a source read again, or a journal and a bus that overlap, never repeats an entry. */
function inOrder() {
  return (source: Observable<JournalEntry>): Observable<JournalEntry> =>
    defer(() => {
      let last = -1;
      return source.pipe(
        filter((entry) => {
          if (entry.sequence <= last) return false;
          last = entry.sequence;
          return true;
        }),
      );
    });
}
