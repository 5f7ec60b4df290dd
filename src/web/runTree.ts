/**
 * A run together with the runs it handed work to. A delegation is journaled in the delegating
 * run as an `agent.message` naming the run it started, so any reader of the journal can follow
 * the tree; the feed follows each sub-run as it appears (recursively) and merges their entries
 * as they come, each tagged with the sub-run it belongs to.
 */
import { concat, defer, filter, from, map, Observable, type Subscription } from 'rxjs';
import type { Agent } from '../agent/types.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
import type { SubRun } from './protocol.ts';
import { untilLastEnd } from './runFeed.ts';

/** The agents sub-runs may belong to: an agent system (`createAgentSystem()`) fits. */
export interface RunAgents {
  has(agentId: string): boolean;
  get(agentId: string): { readonly agent: Agent };
}

/**
 * A sub-run's place in the tree: its parent's key, then its rank among that parent's sub-runs
 * (`1`, `1-2`); `''` is the served run. Ranks follow each parent's journal order, so every
 * reading of the tree, in any process, gives a run the same key.
 */
export type RunKey = string;

export interface TreeEntry {
  readonly key: RunKey;
  readonly entry: JournalEntry;
  /** Absent for the served run's own entries. */
  readonly sub?: SubRun;
}

/**
 * Not a hand-off of the run itself: the message that started it (journaled before its first
 * entry) or its answer (after its end). Its parent's stream shows both; in its own feed they
 * would share the sequence of an entry beside them.
 */
export const notHandOff = (entry: JournalEntry): boolean => !(entry.event.type === 'agent.message' && entry.event.runId === entry.runId);

/**
 * A run of an agent in this process, from its first entry, then live, until its end — also when
 * it has not started yet (a delegation's run is named before it starts).
 */
export function agentRunFeed(agent: Agent, runId: string): Observable<JournalEntry> {
  return defer(() =>
    concat(
      from([agent.journal.entries(runId)]),
      agent.events$.pipe(
        filter((entry) => entry.runId === runId),
        map((entry) => [entry]),
      ),
    ),
  ).pipe(
    map((batch) => batch.filter(notHandOff)),
    untilLastEnd(),
  );
}

interface Followed {
  done: boolean;
  /** It has sent an entry. */
  started: boolean;
  /** The sub-runs it named, in order. */
  readonly children: Set<string>;
  /** The sub-runs whose answer it journaled: they ran, and are waited for. */
  readonly answered: Set<string>;
  /** Absent for the served run. */
  readonly runId?: string;
  subscription?: Subscription;
}

/** The sub-run whose answer an entry of its parent is, if it is one. */
function answered(entry: JournalEntry): string | undefined {
  const { event } = entry;
  return event.type === 'agent.message' && event.kind === 'delegate.result' && event.to === entry.agentId ? event.runId : undefined;
}

/** The run a delegating entry of `parent` started, if it is one. */
function delegated(entry: JournalEntry): { readonly runId: string; readonly agentId: string } | undefined {
  const { event } = entry;
  if (event.type !== 'agent.message' || event.kind !== 'delegate' || event.from !== entry.agentId || event.runId === undefined) return undefined;
  return { runId: event.runId, agentId: event.to };
}

/**
 * The served run's feed and, as they are named, its sub-runs' feeds (given by `subFeed`), merged
 * in the order entries arrive. Completes once the served run and every sub-run that started or
 * was answered have ended; a sub-run that did neither by the time the served run ended is not
 * waited for.
 *
 * @example
 * ```ts
 * runTree(await runFeed(source, runId), (sub) => agentRunFeed(system.get(sub.agentId).agent, sub.runId)).subscribe(send);
 * ```
 */
export function runTree(root: Observable<JournalEntry>, subFeed: (sub: SubRun) => Observable<JournalEntry>): Observable<TreeEntry> {
  return new Observable<TreeEntry>((subscriber) => {
    const subscriptions: Subscription[] = [];
    const runs = new Map<RunKey, Followed>();
    let rootDone = false;

    const settle = (): void => {
      if (rootDone && [...runs.values()].every((run) => run.done)) subscriber.complete();
    };

    const follow = (feed: Observable<JournalEntry>, key: RunKey, sub: SubRun | undefined): void => {
      const run: Followed = { done: false, started: false, children: new Set(), answered: new Set(), ...(sub === undefined ? {} : { runId: sub.runId }) };
      runs.set(key, run);
      const subscription = feed.subscribe({
        next(entry) {
          run.started = true;
          subscriber.next({ key, entry, ...(sub === undefined ? {} : { sub }) });
          const answer = answered(entry);
          if (answer !== undefined) run.answered.add(answer);
          const child = delegated(entry);
          if (child === undefined || run.children.has(child.runId)) return;
          run.children.add(child.runId);
          const childKey = `${key === '' ? '' : `${key}-`}${run.children.size}`;
          const subRun: SubRun = { ...child, parentRunId: entry.runId, ...(sub === undefined ? {} : { parentSubRunId: sub.runId }) };
          follow(subFeed(subRun), childKey, subRun);
        },
        error: (error: unknown) => subscriber.error(error),
        complete() {
          run.done = true;
          if (key === '') {
            rootDone = true;
            // A hand-off that was never answered may never have run (its ask timed out or was
            // cancelled first): unless it has sent entries, it is not waited for.
            const answers = new Set([...runs.values()].flatMap((r) => [...r.answered]));
            for (const other of runs.values()) {
              if (other.started || other.done || (other.runId !== undefined && answers.has(other.runId))) continue;
              other.done = true;
              other.subscription?.unsubscribe();
            }
          }
          settle();
        },
      });
      run.subscription = subscription;
      subscriptions.push(subscription);
    };

    follow(root, '', undefined);
    return () => {
      for (const subscription of subscriptions) subscription.unsubscribe();
    };
  });
}
