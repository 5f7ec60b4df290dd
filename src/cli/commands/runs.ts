/**
 * `actorloop runs`: the store's runs, newest first, with iterations and cost read from each
 * run's journal (the index alone does not keep them).
 */
import type { RunStore } from '../../persistence/fileStore.ts';
import { parseCommand, UsageError } from '../args.ts';
import { formatAge, formatCost, journalTotals, shorten } from '../format.ts';
import { openStore } from '../store.ts';

/** One row of `actorloop runs` (and one element of its `--json` array). */
export interface RunRow {
  readonly runId: string;
  readonly status: string;
  readonly task: string;
  readonly iterations: number;
  readonly costUsd: number;
  readonly createdAt: number;
}

/**
 * The rows for every run of a store.
 *
 * @example
 * ```ts
 * const rows = await listRunRows(createFileStore({ dir: '.actorloop' }));
 * ```
 */
export async function listRunRows(store: RunStore): Promise<RunRow[]> {
  const rows: RunRow[] = [];
  for (const meta of await store.listRuns()) {
    let totals = { iterations: 0, costUsd: 0 };
    if (meta.status !== 'corrupt') {
      try {
        totals = journalTotals(store.readJournal(meta.runId).entries);
      } catch {
        // A run whose journal cannot be read is still listed, with its status from the index.
      }
    }
    rows.push({ runId: meta.runId, status: meta.status, task: meta.task ?? '', iterations: totals.iterations, costUsd: totals.costUsd, createdAt: meta.createdAt });
  }
  return rows;
}

/**
 * `actorloop runs [--store DIR] [--json]`.
 *
 * @example
 * ```ts
 * process.exitCode = await runsCommand(['--json']);
 * ```
 */
export async function runsCommand(args: readonly string[]): Promise<number> {
  const parsed = parseCommand(args, {});
  if (parsed.positionals.length > 0) throw new UsageError(`actorloop runs takes no arguments; got "${parsed.positionals.join(' ')}".`);
  const rows = await listRunRows(openStore(parsed.common.store, true));
  if (parsed.common.json) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    process.stdout.write(`no runs in ${parsed.common.store}\n`);
    return 0;
  }
  const now = Date.now();
  const table = [
    ['RUN', 'STATUS', 'ITER', 'COST', 'AGE', 'TASK'],
    ...rows.map((row) => [row.runId, row.status, String(row.iterations), formatCost(row.costUsd), formatAge(now - row.createdAt), shorten(row.task, 50)]),
  ];
  const widths = table[0]!.map((_, column) => Math.max(...table.map((cells) => cells[column]!.length)));
  for (const cells of table) {
    process.stdout.write(`${cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ')}\n`);
  }
  return 0;
}
