/**
 * The file-backed experience store: one lowdb JSON document `{ v, items }` through the shared
 * `DocumentFile` adapter — atomic temp-file-plus-rename writes, schema version checked, corrupt,
 * empty, NUL-filled, schema-invalid and `__proto__` content refused with a typed error and the
 * file left untouched. Only a missing file starts an empty store. One writer per file: a lock
 * file beside it makes a second open (another process, or this one) fail fast instead of losing
 * writes.
 */
import { join, resolve } from 'node:path';
import { openLockedDocument } from '../persistence/lockedDocument.ts';
import { storeLockedError } from '../persistence/storeErrors.ts';
import { EXPERIENCES_VERSION, ExperienceDocument } from './experience.ts';
import { buildExperienceStore, type ExperienceStore, type ExperienceStoreOptions } from './store.ts';

/** Options of `openExperienceStore`. */
export interface ExperienceFileOptions extends ExperienceStoreOptions {
  /** The JSON file. Default `.actorloop/experiences.json` in the working directory. */
  readonly file?: string;
}

/**
 * Open (or create on first write) the experiences file. Rejects with `CorruptFileError` or
 * `StoreError` (`unsupported_version`) (from the persistence module) when the file cannot be trusted, and
 * with a `StoreError` (code `experience_store_locked`) when another open store owns it. Close the store to release it.
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
  const doc = await openLockedDocument<ExperienceDocument>(file, {
    schema: ExperienceDocument,
    version: EXPERIENCES_VERSION,
    empty: () => ({ v: EXPERIENCES_VERSION, items: [] }),
    owner: 'experiences',
    locked: (inThisProcess, cause) => storeLockedError('experience', file, inThisProcess, cause),
  });
  return buildExperienceStore(doc.data.items, {
    ...(options.redact === undefined ? {} : { redact: options.redact }),
    persistence: {
      save: (items) => doc.save({ v: EXPERIENCES_VERSION, items: [...items] }),
      close: () => doc.release(),
    },
  });
}
