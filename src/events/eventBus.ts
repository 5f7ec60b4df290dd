import { filter, map, Subject, type Observable } from 'rxjs';
import type { JournalEntry, LoopEvent, LoopEventOf, LoopEventType } from '../core/loopEvent.ts';
import { installSubscriberErrorReport } from './subscriberErrors.ts';

// A throwing subscriber must never take the host down, nor flood its output.
installSubscriberErrorReport();

/** Receives every entry synchronously (journal writers); must not throw. */
export type EntrySink = (entry: JournalEntry) => void;

export class EventBus {
  readonly #subject = new Subject<JournalEntry>();
  readonly #sinks: EntrySink[] = [];
  readonly events$: Observable<JournalEntry> = this.#subject.asObservable();
  readonly tokens$: Observable<{ readonly runId: string; readonly delta: string }> = tokenDeltas(this.events$);

  attach(sink: EntrySink): () => void {
    this.#sinks.push(sink);
    return () => {
      const at = this.#sinks.indexOf(sink);
      if (at >= 0) this.#sinks.splice(at, 1);
    };
  }

  publish(entry: JournalEntry): void {
    for (let i = 0; i < this.#sinks.length; i++) {
      try {
        (this.#sinks[i] as EntrySink)(entry);
      } catch (error) {
        console.warn('[actorloop] a journal sink threw; the entry is still published:', error);
      }
    }
    if (this.#subject.observed) this.#subject.next(entry);
  }

  complete(): void {
    this.#subject.complete();
  }
}

/** The text deltas among entries, each with its run's id. */
export function tokenDeltas(entries$: Observable<JournalEntry>): Observable<{ readonly runId: string; readonly delta: string }> {
  return entries$.pipe(
    filter((entry): entry is JournalEntry & { event: LoopEventOf<'token.delta'> } => entry.event.type === 'token.delta'),
    map((entry) => ({ runId: entry.runId, delta: entry.event.delta })),
  );
}

/** Narrows entries to event types, typed: `agent.events$.pipe(ofType('run.terminated'))`. */
export function ofType<TType extends LoopEventType>(...types: TType[]) {
  const wanted = new Set<string>(types);
  return (source: Observable<JournalEntry>): Observable<JournalEntry & { event: LoopEventOf<TType> }> =>
    source.pipe(filter((entry): entry is JournalEntry & { event: LoopEventOf<TType> } => wanted.has(entry.event.type)));
}

export type { LoopEvent };
