/**
 * Opening the run store a command names with `--store`: a command that reads runs needs the
 * folder to exist, and says how to create it when it does not.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { createFileStore, type RunStore } from '../persistence/fileStore.ts';
import type { RunMeta } from '../persistence/records.ts';
import { cliError } from './args.ts';

/**
 * The store at `dir`; with `mustExist`, a clear error when there is no such folder.
 *
 * @example
 * ```ts
 * const store = openStore('.actorloop', true);
 * ```
 */
export function openStore(dir: string, mustExist: boolean): RunStore {
  if (mustExist && !existsSync(dir)) {
    throw cliError(`No run store at ${resolve(dir)}: start a run with \`actorloop run "<task>"\` first, or pass --store DIR.`);
  }
  return createFileStore({ dir });
}

/**
 * A run's metadata, or a clear error naming the store when the id is unknown.
 *
 * @example
 * ```ts
 * const meta = await requireRun(store, 'run_…');
 * ```
 */
export async function requireRun(store: RunStore, runId: string): Promise<RunMeta> {
  const meta = await store.getRun(runId);
  if (meta === null) throw cliError(`No run ${runId} in ${store.dir}: list the runs there with \`actorloop runs --store ${store.dir}\`.`);
  return meta;
}
