import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { createFileStore, type RunStore } from '../persistence/fileStore.ts';
import type { RunMeta } from '../persistence/records.ts';
import { cliError } from './args.ts';

export function openStore(dir: string, mustExist: boolean): RunStore {
  if (mustExist && !existsSync(dir)) {
    throw cliError(`No run store at ${resolve(dir)}: start a run with \`actorloop run "<task>"\` first, or pass --store DIR.`);
  }
  return createFileStore({ dir });
}

/** Left `running` by a process that is gone: nothing writes it any more. A log that cannot be read says nothing either way. */
export function runInterrupted(store: RunStore, runId: string, status: string): boolean {
  if (status !== 'running') return false;
  try {
    return store.ownerGone(runId);
  } catch {
    return false;
  }
}

export async function requireRun(store: RunStore, runId: string): Promise<RunMeta> {
  const meta = await store.getRun(runId);
  if (meta === null) throw cliError(`No run ${runId} in ${store.dir}: list the runs there with \`actorloop runs --store ${store.dir}\`.`);
  return meta;
}
