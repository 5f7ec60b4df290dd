/**
 * Deltas a worker in another process streams are in no journal. A follower shows a model call's text
 * live only if it has the call from its first notice on (or from a catch-up, the text so far sent again
 * for late joiners), and only until it has seen the run go past the call; otherwise the committed reply
 * brings the text whole, so no text is shown twice.
 */
import { Observable, type OperatorFunction } from 'rxjs';
import type { JournalEntry, LiveDelta } from '../core/loopEvent.ts';

export function liveDelta(entry: JournalEntry): LiveDelta | undefined {
  const { event } = entry;
  return event.type === 'token.delta' || event.type === 'thinking.delta' ? event.live : undefined;
}

/** Runs a follower keeps track of before it forgets the oldest (a follower of a long-lived agent). */
const MAX_RUNS = 4_096;

interface RunSeen {
  /** Its last committed entry this follower passed on. */
  last: number;
  /**
   * The last part passed on of each call in flight; null for a call joined after its start (a catch-up
   * may start it), false for one that had a gap after some of it was passed on (its reply brings the rest).
   */
  readonly calls: Map<string, number | null | false>;
  /** Calls whose catch-up is passing: the part it precedes. */
  readonly catching: Map<string, number>;
}

/** One per follower, fed every entry it passes on, in order. */
export class LiveCalls {
  readonly #runs = new Map<string, RunSeen>();
  /** The run of the entry before: a run's entries mostly follow each other (its streamed tokens). */
  #lastRunId: string | undefined;
  #lastRun: RunSeen | undefined;

  /** False for a live delta the follower must not show; true for every committed entry. */
  admit(entry: JournalEntry): boolean {
    const live = liveDelta(entry);
    if (live === undefined) {
      this.committed(entry);
      return true;
    }
    const run = this.#run(entry.runId);
    // The run went past the call's start: its reply is here already, or will be.
    if (run.last > entry.sequence) return false;
    const had = run.calls.get(live.call);
    const catching = run.catching.get(live.call);
    if (live.catchUp === true) {
      // Taken only by a follower without the call (or taking this catch-up); one that has it skips it.
      const takes = catching === live.part || ((had === undefined || had === null) && catching === undefined);
      if (takes) {
        run.catching.set(live.call, live.part);
        run.calls.set(live.call, live.part - 1);
      }
      return takes;
    }
    if (run.catching.size > 0) run.catching.delete(live.call);
    const fits = had === undefined ? live.part === 0 : typeof had === 'number' && (live.part === had || live.part === had + 1);
    run.calls.set(live.call, fits ? live.part : typeof had === 'number' || had === false ? false : null);
    return fits;
  }

  /** `admit` for an entry known to be committed (no live delta). */
  committed(entry: JournalEntry): void {
    const run = this.#run(entry.runId);
    if (entry.sequence > run.last) run.last = entry.sequence;
    // A committed step after a call's start ends it: its reply is in the journal.
    if (run.calls.size > 0) run.calls.clear();
    if (run.catching.size > 0) run.catching.clear();
    if (entry.event.type === 'run.terminated') this.#forget(entry.runId);
  }

  #run(runId: string): RunSeen {
    if (runId === this.#lastRunId) return this.#lastRun as RunSeen;
    let run = this.#runs.get(runId);
    if (run === undefined) {
      if (this.#runs.size >= MAX_RUNS) this.#forget(this.#runs.keys().next().value as string);
      run = { last: -1, calls: new Map(), catching: new Map() };
      this.#runs.set(runId, run);
    }
    this.#lastRunId = runId;
    this.#lastRun = run;
    return run;
  }

  #forget(runId: string): void {
    this.#runs.delete(runId);
    if (runId === this.#lastRunId) {
      this.#lastRunId = undefined;
      this.#lastRun = undefined;
    }
  }
}

/** Each subscriber follows live calls from when it subscribed. */
export function liveFromStart(): OperatorFunction<JournalEntry, JournalEntry> {
  return (source) =>
    new Observable<JournalEntry>((subscriber) => {
      const calls = new LiveCalls();
      const subscription = source.subscribe({
        next: (entry) => {
          if (calls.admit(entry)) subscriber.next(entry);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
      return () => subscription.unsubscribe();
    });
}
