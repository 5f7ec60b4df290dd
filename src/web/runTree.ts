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

/** An entry the feeds gave while they were subscribed to, with the sub-run it made known. */
interface Held {
  readonly item: TreeEntry;
  reveals?: RunKey;
}

/**
 * Live, each entry arrives as it is written, and a sub-run's entries so far arrive at once after the entry that makes
 * it known. The journals so far come run by run instead, so they are put back in that order: by the place each was
 * written (`placeOf`), a run's entries from before its delegation's entry right after it. Without every place (entries
 * read from a store), they stay in journal order.
 */
function asWritten(held: readonly Held[], placeOf: (entry: JournalEntry) => number | undefined): TreeEntry[] {
  const placed = held.map((one) => ({ one, place: placeOf(one.item.entry) }));
  if (placed.some(({ place }) => place === undefined)) return held.map(({ item }) => item);
  placed.sort((a, b) => (a.place as number) - (b.place as number));
  const known = new Set<RunKey>(['']);
  const early = new Map<RunKey, Held[]>();
  const out: TreeEntry[] = [];
  const put = ({ item, reveals }: Held): void => {
    out.push(item);
    if (reveals === undefined) return;
    known.add(reveals);
    const before = early.get(reveals) ?? [];
    early.delete(reveals);
    for (const one of before) put(one);
  };
  for (const { one } of placed) {
    const { key } = one.item;
    if (known.has(key)) put(one);
    else if (early.has(key)) early.get(key)?.push(one);
    else early.set(key, [one]);
  }
  for (const rest of early.values()) out.push(...rest.map(({ item }) => item));
  return out;
}

/**
 * The served run's entries and, as its delegations name them, each sub-run's. With `placeOf` (runs of this process's
 * journals), the entries the journals hold on subscribing come in the order they were written, as a page that read
 * them live got them.
 */
export function runTree(root: Observable<JournalEntry>, subFeed: (sub: SubRun) => Observable<JournalEntry>, placeOf?: (entry: JournalEntry) => number | undefined): Observable<TreeEntry> {
  return new Observable<TreeEntry>((subscriber) => {
    const subscriptions: Subscription[] = [];
    const runs = new Map<RunKey, Followed>();
    let rootDone = false;
    /** What the feeds give while being subscribed to, until it is put in order. */
    let held: Held[] | undefined = placeOf === undefined ? undefined : [];

    const settle = (): void => {
      if (held === undefined && rootDone && [...runs.values()].every((run) => run.done)) subscriber.complete();
    };

    const follow = (feed: Observable<JournalEntry>, key: RunKey, sub: SubRun | undefined): void => {
      const run: Followed = { done: false, started: false, children: new Set(), answered: new Set(), ...(sub === undefined ? {} : { runId: sub.runId }) };
      runs.set(key, run);
      const subscription = feed.subscribe({
        next(entry) {
          run.started = true;
          const item: TreeEntry = { key, entry, ...(sub === undefined ? {} : { sub }) };
          const one: Held | undefined = held === undefined ? undefined : { item };
          if (one === undefined) subscriber.next(item);
          else held?.push(one);
          const answer = answered(entry);
          if (answer !== undefined) run.answered.add(answer);
          const child = delegated(entry);
          if (child === undefined || run.children.has(child.runId)) return;
          run.children.add(child.runId);
          const childKey = `${key === '' ? '' : `${key}-`}${run.children.size}`;
          if (one !== undefined) one.reveals = childKey;
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
    if (held !== undefined && placeOf !== undefined) {
      const ordered = asWritten(held, placeOf);
      held = undefined;
      for (const item of ordered) subscriber.next(item);
      settle();
    }
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
