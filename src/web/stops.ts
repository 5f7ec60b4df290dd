// Where a served run's responses ended at a wait. The page's answer goes on from the last; a page reloaded
// while that wait is unanswered gets the response it was in again, from where the one before it ended.
import type { JournalEntry } from '../core/loopEvent.ts';
import type { EventCursor } from './sse.ts';
import type { TreeCursor } from './treeSse.ts';

export interface Stop {
  readonly wait: JournalEntry;
  /** Every run's position when the response ended. */
  readonly at: TreeCursor;
}

const same = (a: JournalEntry, b: JournalEntry): boolean => a.runId === b.runId && a.sequence === b.sequence;

/** The last two per served run: the response a page is in begins at the one before the last. */
export class ResponseStops {
  readonly #byRun = new Map<string, readonly Stop[]>();

  record(root: string, stop: Stop): void {
    const kept = this.#byRun.get(root) ?? [];
    // A response read again (a reload) ends at the same wait, with what the other runs did since: the page has that now.
    if (kept.some((one) => same(one.wait, stop.wait))) this.#byRun.set(root, kept.map((one) => (same(one.wait, stop.wait) ? stop : one)));
    else this.#byRun.set(root, [...kept, stop].slice(-2));
  }

  forget(root: string): void {
    this.#byRun.delete(root);
  }

  /** The latest stop at one of `waits`. */
  at(root: string, waits: readonly (JournalEntry | undefined)[]): Stop | undefined {
    return this.#byRun.get(root)?.findLast((stop) => waits.some((wait) => wait !== undefined && same(stop.wait, wait)));
  }

  /** The last stop, and the one before it. */
  last(root: string): { readonly last?: Stop; readonly before?: Stop } {
    const kept = this.#byRun.get(root) ?? [];
    const [last, before] = [kept.at(-1), kept.at(-2)];
    return { ...(last === undefined ? {} : { last }), ...(before === undefined ? {} : { before }) };
  }
}

/** A page's cursor at `stop`: each run where the response left it (the ending events' own indices aside). */
export function atStop(cursor: TreeCursor, stop: Stop): boolean {
  const sequences = (c: TreeCursor) => [...c].map(([key, p]: [string, EventCursor]) => `${key}@${p.sequence}`).sort().join(',');
  return sequences(cursor) === sequences(stop.at);
}
