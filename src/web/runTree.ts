// A delegation is journaled in the delegating run as an `agent.message` naming the run it started,
// so any reader of the journal can follow the tree.
import { concat, defer, from, map, Observable, type Subscription } from 'rxjs';
import type { Agent } from '../agent/types.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
import type { SubRun } from './protocol.ts';
import { untilLastEnd } from './runFeed.ts';

/** An agent system (`createAgentSystem()`) fits. */
export interface RunAgents {
  has(agentId: string): boolean;
  get(agentId: string): { readonly agent: Agent };
  list(): readonly { readonly agent: Agent }[];
}

/** `''` is the served run, then ranks (`1`, `1-2`) in each parent's journal order: the same key in any process. */
export type RunKey = string;

export interface TreeEntry {
  readonly key: RunKey;
  readonly entry: JournalEntry;
  readonly sub?: SubRun;
}

/** A run's own hand-off messages belong to its parent's stream; in its own feed they would share a neighbour's sequence. */
export const notHandOff = (entry: JournalEntry): boolean => !(entry.event.type === 'agent.message' && entry.event.runId === entry.runId);

/** Also for a run not started yet: a delegation's run is named before it starts. */
export function agentRunFeed(agent: Agent, runId: string): Observable<JournalEntry> {
  return defer(() =>
    concat(
      from([agent.journal.entries(runId)]),
      agent.journal.follow(runId).pipe(map((entry) => [entry])),
    ),
  ).pipe(
    map((batch) => batch.filter(notHandOff)),
    untilLastEnd(),
  );
}

interface Followed {
  done: boolean;
  started: boolean;
  readonly children: Set<string>;
  /** Sub-runs whose answer it journaled: they ran, and are waited for. */
  readonly answered: Set<string>;
  readonly runId?: string;
  subscription?: Subscription;
}

function answered(entry: JournalEntry): string | undefined {
  const { event } = entry;
  return event.type === 'agent.message' && event.kind === 'delegate.result' && event.to === entry.agentId ? event.runId : undefined;
}

function delegated(entry: JournalEntry): { readonly runId: string; readonly agentId: string } | undefined {
  const { event } = entry;
  if (event.type !== 'agent.message' || event.kind !== 'delegate' || event.from !== entry.agentId || event.runId === undefined) return undefined;
  return { runId: event.runId, agentId: event.to };
}

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

/** Each run of a tree that has entries, by key, with its id and last entry, as the journals given hold them now. */
export function treeNow(root: readonly JournalEntry[], entriesOf: (sub: SubRun) => readonly JournalEntry[]): Map<RunKey, { readonly runId: string; readonly last: JournalEntry }> {
  const runs = new Map<RunKey, { readonly runId: string; readonly last: JournalEntry }>();
  const feed = (entries: readonly JournalEntry[]) => from(entries.filter(notHandOff));
  runTree(feed(root), (sub) => feed(entriesOf(sub))).subscribe(({ key, entry }) => runs.set(key, { runId: entry.runId, last: entry }));
  return runs;
}
