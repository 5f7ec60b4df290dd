/** `agent.start()`, `resume()` and `call()` of a durable agent: the run lives in the database; this follows it. */
import { filter, Observable } from 'rxjs';
import { createActor, fromPromise } from 'xstate';
import { ActorloopError } from '../core/errors.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
import type { LoopResult } from '../core/run.ts';
import type { AgentRun } from '../agent/types.ts';
import { errorForResult } from '../agent/errors.ts';
import { failedResult } from '../agent/result.ts';
import { LiveCalls, liveDelta } from '../events/liveDeltas.ts';

export interface FollowedRun {
  readonly runId: string;
  readonly agentId: string;
  /** Rejects only when the run could not be queued or read. */
  readonly ended: Promise<LoopResult>;
  entries(): Promise<JournalEntry[]>;
  /** Every entry of the agent's runs as they commit, and the deltas their workers stream. */
  readonly live$: Observable<JournalEntry>;
  /** `queued` before any notice. */
  status(): string;
  approve(toolCallIds?: readonly string[]): Promise<void>;
  reject(reason?: string, toolCallIds?: readonly string[]): Promise<void>;
  cancel(reason?: string): Promise<void>;
}

export function followRun(run: FollowedRun): AgentRun {
  const settled = run.ended.then(
    (result) => result,
    (error: unknown) => failureResult(error, run.runId, run.agentId),
  );
  const actor = createActor(fromPromise(() => settled));
  actor.start();
  // A refusal (the run is not waiting, or already ended) is reported, as an in-memory run's would be thrown.
  const report = (what: string) => (error: unknown) => console.warn(`[actorloop] ${what} run ${run.runId}: ${error instanceof Error ? error.message : String(error)}`);
  let ended: LoopResult | undefined;
  void settled.then((result) => (ended = result));
  const result = settled.then((ended) => (ended.status === 'done' ? ended : Promise.reject(errorForResult(ended))));
  // Like an in-memory run's: a failure nobody awaits is not an unhandled rejection.
  result.catch(() => undefined);
  return {
    runId: run.runId,
    actor: actor as unknown as AgentRun['actor'],
    events$: runEvents(run),
    settled,
    result,
    cancel: (reason) => void run.cancel(reason).catch(report('could not cancel')),
    approve: (toolCallIds) => void run.approve(toolCallIds).catch(report('could not approve')),
    reject: (reason, toolCallIds) => void run.reject(reason, toolCallIds).catch(report('could not reject')),
    phase: () => ended?.status ?? (run.status() === 'awaiting_human' ? 'awaitingHuman' : run.status()),
  };
}

/** Committed entries, then live ones, each once and in order; a worker's streamed deltas while its call is on. */
function runEvents(run: FollowedRun): Observable<JournalEntry> {
  return new Observable<JournalEntry>((subscriber) => {
    let last = -1;
    let early: JournalEntry[] | undefined = [];
    // Deltas that came while the journal was read are dropped if the journal already has their reply.
    const calls = new LiveCalls();
    const emit = (entry: JournalEntry): void => {
      if (liveDelta(entry) !== undefined) {
        if (calls.admit(entry)) subscriber.next(entry);
        return;
      }
      if (entry.sequence <= last) return;
      last = entry.sequence;
      calls.admit(entry);
      subscriber.next(entry);
      if (entry.event.type === 'run.terminated') subscriber.complete();
    };
    // Listening before reading: an entry that commits while the journal is read is not lost.
    const subscription = run.live$.pipe(filter((entry) => entry.runId === run.runId)).subscribe({
      next: (entry) => (early === undefined ? emit(entry) : early.push(entry)),
      error: (error: unknown) => subscriber.error(error),
    });
    run.entries().then(
      (entries) => {
        for (const entry of entries) emit(entry);
        const waiting = early ?? [];
        early = undefined;
        for (const entry of waiting) emit(entry);
      },
      (error: unknown) => subscriber.error(error),
    );
    return () => subscription.unsubscribe();
  });
}

/** Every failure carries its result; otherwise one is made from the error. */
export function failureResult(error: unknown, runId: string, agentId: string): LoopResult {
  const carried = (error as { result?: LoopResult } | null)?.result;
  if (carried !== undefined) return carried;
  const message = error instanceof Error ? error.message : String(error);
  return failedResult(runId, agentId, error instanceof ActorloopError ? error.toJSON() : { name: 'Error', code: 'unexpected', blame: 'runtime', message }, { cause: error });
}
