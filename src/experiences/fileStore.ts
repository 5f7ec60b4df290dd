/**
 * The file-backed experience store: one lowdb JSON document `{ v, items }` through the shared
 * `DocumentFile` adapter — atomic temp-file-plus-rename writes, schema version checked, corrupt,
 * empty, NUL-filled, schema-invalid and `__proto__` content refused with a typed error and the
 * file left untouched. Only a missing file starts an empty store. One writer per file: a lock
 * file beside it makes a second open (another process, or this one) fail fast instead of losing
 * writes.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { Low } from 'lowdb';
import { DEFAULTS } from '../core/defaults.ts';
import { DocumentFile } from '../persistence/documentFile.ts';
import { RunLockedError } from '../persistence/errors.ts';
import { acquireRunLock, type RunLock } from '../persistence/lock.ts';
import { ExperienceStoreLockedError } from './errors.ts';
import { EXPERIENCES_VERSION, ExperienceDocument } from './experience.ts';
import { buildExperienceStore, type ExperienceStore, type ExperienceStoreOptions } from './store.ts';

/** Options of `openExperienceStore`. */
export interface ExperienceFileOptions extends ExperienceStoreOptions {
  /** The JSON file. Default `.actorloop/experiences.json` in the working directory. */
  readonly file?: string;
}

/**
 * Open (or create on first write) the experiences file. Rejects with `CorruptFileError` or
 * `UnsupportedVersionError` (from the persistence module) when the file cannot be trusted, and
 * with `ExperienceStoreLockedError` when another open store owns it. Close the store to release it.
 *
 * @example
 * ```ts
 * const store = await openExperienceStore({ file: '.actorloop/experiences.json', redact: createRedactor().text });
 * await store.add({ condition: 'the API returns 429', rule: 'wait for Retry-After before retrying', confidence: 0.8 });
 * await store.close();
 * ```
 */
export async function openExperienceStore(options: ExperienceFileOptions = {}): Promise<ExperienceStore> {
  const file = resolve(options.file ?? join('.actorloop', 'experiences.json'));
  mkdirSync(dirname(file), { recursive: true });
  const lock = lockFile(file);
  try {
    // A crash mid-write can leave lowdb's temp file; it never holds acknowledged data. Removed
    // only now, under the lock, so it cannot be another writer's write in progress.
    rmSync(join(dirname(file), `.${basename(file)}.tmp`), { force: true });
    const adapter = new DocumentFile(file, ExperienceDocument, EXPERIENCES_VERSION);
    const db = new Low<ExperienceDocument>(adapter, { v: EXPERIENCES_VERSION, items: [] });
    await db.read();
    return buildExperienceStore(db.data.items, {
      ...(options.redact === undefined ? {} : { redact: options.redact }),
      persistence: {
        save: async (items) => {
          db.data = { v: EXPERIENCES_VERSION, items: [...items] };
          await db.write();
        },
        close: () => lock.release(),
      },
    });
  } catch (error) {
    lock.release();
    throw error;
  }
}

function lockFile(file: string): RunLock {
  try {
    return acquireRunLock(`${file}.lock`, 'experiences', { leaseMs: DEFAULTS.persistence.leaseMs });
  } catch (error) {
    if (!(error instanceof RunLockedError)) throw error;
    throw new ExperienceStoreLockedError(
      `${file} is already open for writing by another experience store (${error.message.includes('(this process)') ? 'in this process' : 'in another process'}). ` +
        'Share one store object, or close the other one before opening the file again.',
      { file, cause: error },
    );
  }
}
