/**
 * A run tree read from this process's journals gives every reader the same order: the order the entries were
 * written, a sub-run's entries from before its delegation right after it. A page that subscribed at the run's start
 * and one that subscribes later (a reconnect) therefore see the waits of parallel sub-runs at the same points.
 */
import fc from 'fast-check';
import { concat, defer, from, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { JournalEntry, LoopEvent } from '../../src/core/loopEvent.ts';
import { MemoryJournal, writtenPlace } from '../../src/events/memoryJournal.ts';
import { runTree, type TreeEntry } from '../../src/web/runTree.ts';

/** The lead delegates to `a` and `b`; `a` delegates to `c`. */
const PARENT: Readonly<Record<string, string>> = { a: 'lead', b: 'lead', c: 'a' };
const RUNS = ['lead', 'a', 'b', 'c'] as const;
type Run = (typeof RUNS)[number];

class Tree {
  readonly journals = new Map<Run, MemoryJournal>(RUNS.map((run) => [run, new MemoryJournal()]));
  readonly #sequence = new Map<Run, number>();

  write(run: Run, event: LoopEvent): void {
    const sequence = this.#sequence.get(run) ?? 0;
    this.#sequence.set(run, sequence + 1);
    this.journal(run).write({ sequence, timestamp: 0, agentId: run, runId: `run-${run}`, iteration: 0, event });
  }

  journal(run: Run): MemoryJournal {
    return this.journals.get(run) as MemoryJournal;
  }

  feed(run: Run): Observable<JournalEntry> {
    const journal = this.journal(run);
    return defer(() => concat(from(journal.entries(`run-${run}`)), journal.follow(`run-${run}`)));
  }

  /** Every entry it gives, from now on, as `key runId sequence`. */
  read(placed: boolean): string[] {
    const seen: string[] = [];
    const sub = (agentId: string): Run => agentId as Run;
    runTree(this.feed('lead'), (run) => this.feed(sub(run.agentId)), placed ? writtenPlace : undefined).subscribe(({ key, entry }: TreeEntry) =>
      seen.push(`${key} ${entry.runId} ${entry.sequence}`),
    );
    return seen;
  }
}

const delegate = (to: Run): LoopEvent => ({ type: 'agent.message', kind: 'delegate', from: PARENT[to] as string, to, runId: `run-${to}` });
const token: LoopEvent = { type: 'token.delta', delta: 'x' };

/** A schedule of writes: a sub-run may write before its delegation is journaled, as a started hand-off can. */
const schedule = fc.array(fc.constantFrom<Run>(...RUNS), { minLength: 1, maxLength: 40 }).chain((writers) =>
  fc.record({
    writers: fc.constant(writers),
    delegations: fc.record({ a: fc.nat(writers.length), b: fc.nat(writers.length), c: fc.nat(writers.length) }),
    joins: fc.array(fc.nat(writers.length), { minLength: 1, maxLength: 4 }),
  }),
);

/** Readers join before the writes of the steps in `joins` (and one before any); one more reads it all at the end. */
function play({ writers, delegations, joins }: { writers: readonly Run[]; delegations: Record<'a' | 'b' | 'c', number>; joins: readonly number[] }, placed: boolean) {
  const tree = new Tree();
  const first = tree.read(placed);
  const later: string[][] = [];
  for (let step = 0; step <= writers.length; step++) {
    for (const at of joins) if (at === step) later.push(tree.read(placed));
    for (const to of ['a', 'b', 'c'] as const) if (delegations[to] === step) tree.write(PARENT[to] as Run, delegate(to));
    const writer = writers[step];
    if (writer !== undefined) tree.write(writer, token);
  }
  return { first, later: [...later, tree.read(placed)] };
}

describe("a run tree read from this process's journals", () => {
  it('gives a reader that joins at any point the entries a reader from the start got, in the same order', () => {
    fc.assert(
      fc.property(schedule, (run) => {
        const { first, later } = play(run, true);
        // A later reader's journals so far are put in order, then it goes on live: all of it as the first reader had it.
        for (const reading of later) expect(reading).toEqual(first);
      }),
      { numRuns: 300 },
    );
  });

  it('without the places written (entries read from a store), reads each journal so far as one batch, out of the order written', () => {
    // `b` wrote between `a`'s entries: a reader that joins afterwards gets them apart only without the places.
    const run = { writers: ['a', 'b', 'a'] as Run[], delegations: { a: 0, b: 0, c: 99 }, joins: [3] };
    const placed = play(run, true);
    const unplaced = play(run, false);
    expect(placed.later[0]).toEqual(placed.first);
    expect(unplaced.later[0]).not.toEqual(unplaced.first);
    expect(placed.first).toEqual([' run-lead 0', ' run-lead 1', '1 run-a 0', '2 run-b 0', '1 run-a 1']);
    expect(unplaced.later[0]).toEqual([' run-lead 0', '1 run-a 0', '1 run-a 1', ' run-lead 1', '2 run-b 0']);
  });

  it('keeps the places of the entries a full journal kept when it made room', () => {
    const journal = new MemoryJournal(8);
    const other = new MemoryJournal();
    const write = (into: MemoryJournal, runId: string, sequence: number) => into.write({ sequence, timestamp: 0, agentId: 'agent', runId, iteration: 0, event: token });
    for (let i = 0; i < 20; i++) {
      write(journal, i % 3 === 0 ? 'run-ended' : 'run-live', i);
      write(other, 'run-other', i);
    }
    const kept = journal.entries('run-live');
    expect(kept.length).toBeLessThan(14);
    const byPlace = [...kept, ...other.entries('run-other')].sort((a, b) => (writtenPlace(a) as number) - (writtenPlace(b) as number));
    // Written alternately: each kept entry comes right before the other journal's entry of the same step.
    const expected = other.entries('run-other').flatMap((entry) => [...kept.filter(({ sequence }) => sequence === entry.sequence), entry]);
    expect(byPlace.map(({ runId, sequence }) => `${runId} ${sequence}`)).toEqual(expected.map(({ runId, sequence }) => `${runId} ${sequence}`));
    // An entry no journal gave has no place.
    expect(writtenPlace({ ...(kept[0] as JournalEntry) })).toBeUndefined();
  });
});
