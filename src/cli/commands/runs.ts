// Iterations and cost of a run that ended are in the index; those of any other are read from its journal.
import type { JournalEntry } from '../../core/loopEvent.ts';
import type { RunStore } from '../../persistence/fileStore.ts';
import type { PostgresRuntime } from '../../postgres/index.ts';
import { parseCommand, usageError } from '../args.ts';
import { DATABASE_FLAG, durableUrl, openRuntime } from '../durable.ts';
import { formatAge, formatCost, journalTotals, shorten } from '../format.ts';
import { openStore, runInterrupted } from '../store.ts';

/** A run left `running` by a process that is gone: nothing writes it any more, and `resume` continues it. */
export const INTERRUPTED = 'interrupted';

export interface RunRow {
  readonly runId: string;
  readonly status: string;
  readonly task: string;
  readonly iterations: number;
  readonly costUsd: number;
  readonly createdAt: number;
  /** Written by a journal-only store: an interrupted one cannot be resumed. */
  readonly journalOnly?: true;
}

function totalsOf(read: () => readonly JournalEntry[]): { iterations: number; costUsd: number } {
  try {
    return journalTotals(read());
  } catch {
    // A run whose journal cannot be read is still listed, with its status from the index.
    return { iterations: 0, costUsd: 0 };
  }
}

export async function listRunRows(store: RunStore): Promise<RunRow[]> {
  const rows: RunRow[] = [];
  for (const meta of await store.listRuns()) {
    // An ended run's end record has its totals, unless a resume wrote it: only the others' journals are read.
    const totals =
      meta.status === 'corrupt'
        ? { iterations: 0, costUsd: 0 }
        : meta.iterations !== undefined && meta.costUsd !== undefined
          ? { iterations: meta.iterations, costUsd: meta.costUsd }
          : totalsOf(() => store.readJournal(meta.runId).entries);
    const status = runInterrupted(store, meta.runId, meta.status) ? INTERRUPTED : meta.status;
    rows.push({ runId: meta.runId, status, task: meta.task ?? '', ...totals, createdAt: meta.createdAt, ...(meta.status !== 'corrupt' && meta.journalOnly === true ? { journalOnly: true as const } : {}) });
  }
  return rows;
}

async function listDurableRows(runtime: PostgresRuntime): Promise<RunRow[]> {
  const rows: RunRow[] = [];
  for (const info of await runtime.listRuns()) {
    const entries = await runtime.journal(info.runId).catch(() => undefined);
    const totals = entries === undefined ? { iterations: 0, costUsd: 0 } : totalsOf(() => entries);
    rows.push({ runId: info.runId, status: info.status, task: info.task, ...totals, createdAt: info.createdAt.getTime() });
  }
  return rows;
}

function statusCell(row: RunRow): string {
  if (row.status !== INTERRUPTED) return row.status;
  return row.journalOnly === true ? `${INTERRUPTED} (owner gone; journal only, cannot be resumed)` : `${INTERRUPTED} (owner gone; resume with: actorloop resume ${row.runId})`;
}

export async function runsCommand(args: readonly string[]): Promise<number> {
  const parsed = parseCommand(args, DATABASE_FLAG);
  if (parsed.positionals.length > 0) throw usageError(`actorloop runs takes no arguments; got "${parsed.positionals.join(' ')}".`);
  const url = durableUrl(parsed);
  let rows: RunRow[];
  if (url === undefined) {
    rows = await listRunRows(openStore(parsed.common.store, true));
  } else {
    const runtime = openRuntime(url);
    try {
      rows = await listDurableRows(runtime);
    } finally {
      await runtime.close();
    }
  }
  if (parsed.common.json) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    process.stdout.write(`no runs in ${url === undefined ? parsed.common.store : 'the database'}\n`);
    return 0;
  }
  const now = Date.now();
  const table = [
    ['RUN', 'STATUS', 'ITER', 'COST', 'AGE', 'TASK'],
    ...rows.map((row) => [row.runId, statusCell(row), String(row.iterations), formatCost(row.costUsd), formatAge(now - row.createdAt), shorten(row.task, 50)]),
  ];
  const widths = table[0]!.map((_, column) => Math.max(...table.map((cells) => cells[column]!.length)));
  for (const cells of table) {
    process.stdout.write(`${cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ')}\n`);
  }
  return 0;
}
