/** From the agent's store when it has one (every run, across processes), else its in-memory journal (this process's recent runs). */
import type { JournalEntry } from '../core/loopEvent.ts';
import type { MemoryJournal } from '../events/memoryJournal.ts';
import type { RunStore } from '../persistence/fileStore.ts';
import { buildTrace, type Trace, type TraceStatus } from './trace.ts';
import { defined } from '../core/defined.ts';

/** A trace without its steps: what `list` gives. */
export interface TraceSummary {
  readonly id: string;
  readonly mode: Trace['mode'];
  readonly task: string;
  readonly status: TraceStatus;
  readonly created: number;
  readonly completed?: number;
}

export interface TraceListOptions {
  readonly status?: TraceStatus;
  /** Only runs created at or after this time (epoch ms or a Date). */
  readonly since?: number | Date;
  /** At most this many, newest first. Default 50. */
  readonly limit?: number;
}

/** Where a runtime that keeps runs elsewhere (in a database) reads an agent's runs from. */
export interface RunSource {
  list(): Promise<readonly { readonly runId: string; readonly createdAt: number }[]>;
  entries(runId: string): Promise<readonly JournalEntry[]>;
}

export interface Traces {
  /** The run's trace, or `undefined` when neither the store nor the in-memory journal has it. */
  get(runId: string): Promise<Trace | undefined>;
  list(options?: TraceListOptions): Promise<TraceSummary[]>;
}

const summary = (trace: Trace): TraceSummary => ({
  id: trace.id,
  mode: trace.mode,
  task: trace.task,
  status: trace.status,
  created: trace.created,
  ...defined({ completed: trace.completed }),
});

/** Entries of store runs kept between readings, so a run is read again only from where the last reading ended. */
const KEPT_ENTRIES = 20_000;

export function createTraces(source: { readonly agentId: string; readonly journal: MemoryJournal; readonly store?: RunStore; readonly runs?: RunSource }): Traces {
  const { agentId, journal, store, runs } = source;
  const kept = new Map<string, JournalEntry[]>();
  let keptCount = 0;
  const fromStore = (store: RunStore, runId: string): readonly JournalEntry[] => {
    const held = kept.get(runId) ?? [];
    const last = held.at(-1)?.sequence;
    const read = store.readJournal(runId, last === undefined ? {} : { after: last }).entries;
    const entries = read.length === 0 ? held : held.concat(read);
    // The runs read least recently go first once too many entries are kept.
    kept.delete(runId);
    kept.set(runId, entries);
    keptCount += entries.length - held.length;
    for (const [id, dropped] of kept) {
      if (keptCount <= KEPT_ENTRIES || id === runId) break;
      kept.delete(id);
      keptCount -= dropped.length;
    }
    return entries;
  };
  const entriesOf = async (runId: string): Promise<readonly JournalEntry[]> => {
    if (runs !== undefined) return runs.entries(runId);
    if (store !== undefined && (await store.getRun(runId)) !== null) return fromStore(store, runId);
    return journal.entries(runId);
  };
  return {
    async get(runId) {
      return buildTrace(await entriesOf(runId), runId);
    },
    async list(options = {}) {
      const since = options.since instanceof Date ? options.since.getTime() : (options.since ?? 0);
      const limit = options.limit ?? 50;
      const ids = new Map<string, number>();
      if (runs !== undefined) for (const run of await runs.list()) ids.set(run.runId, run.createdAt);
      else if (store !== undefined) {
        for (const run of await store.listRuns()) if (run.status !== 'corrupt' && run.agentId === agentId) ids.set(run.runId, run.createdAt);
      }
      if (runs === undefined) for (const entry of journal.entries()) if (entry.agentId === agentId && !ids.has(entry.runId)) ids.set(entry.runId, entry.timestamp);
      const candidates = [...ids].filter(([, created]) => created >= since).sort((a, b) => b[1] - a[1]);
      const out: TraceSummary[] = [];
      // Newest first, and only as many traces built as the filter and the limit need.
      for (const [runId] of candidates) {
        if (out.length >= limit) break;
        const trace = buildTrace(await entriesOf(runId), runId);
        if (trace !== undefined && (options.status === undefined || trace.status === options.status)) out.push(summary(trace));
      }
      return out;
    },
  };
}
