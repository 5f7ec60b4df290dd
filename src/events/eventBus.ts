/**
 * Where journal entries go: an RxJS subject kept private, exposed as observables. Subjects in,
 * observables out.
 */
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
  /** Every journal entry, as it happens. */
  readonly events$: Observable<JournalEntry> = this.#subject.asObservable();
  /** Text deltas of streamed model replies, each with the id of the run that streamed it. */
  readonly tokens$: Observable<{ readonly runId: string; readonly delta: string }> = this.events$.pipe(
    filter((entry): entry is JournalEntry & { event: LoopEventOf<'token.delta'> } => entry.event.type === 'token.delta'),
    map((entry) => ({ runId: entry.runId, delta: entry.event.delta })),
  );

  /** Attach a synchronous sink (a journal writer). Returns a detach function. */
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

/**
 * Narrow a stream of entries to one event type, typed.
 *
 * @example
 * ```ts
 * agent.events$.pipe(ofType('run.terminated')).subscribe((e) => console.log(e.event.reason));
 * ```
 */
export function ofType<TType extends LoopEventType>(...types: TType[]) {
  const wanted = new Set<string>(types);
  return (source: Observable<JournalEntry>): Observable<JournalEntry & { event: LoopEventOf<TType> }> =>
    source.pipe(filter((entry): entry is JournalEntry & { event: LoopEventOf<TType> } => wanted.has(entry.event.type)));
}

export type { LoopEvent };
