/** One writer per file: a lock file beside it makes a second open fail fast instead of losing writes. */
import { join, resolve } from 'node:path';
import { openLockedDocument } from '../persistence/lockedDocument.ts';
import { storeLockedError } from '../persistence/storeErrors.ts';
import { EXPERIENCES_VERSION, ExperienceDocument } from './experience.ts';
import { buildExperienceStore, type ExperienceStore, type ExperienceStoreOptions } from './store.ts';
import { defined } from '../core/defined.ts';

export interface ExperienceFileOptions extends ExperienceStoreOptions {
  /** Default `.actorloop/experiences.json` in the working directory. */
  readonly file?: string;
}

/**
 * Rejects with `CorruptFileError` or `StoreError` (`unsupported_version`) for a file that cannot be trusted, and
 * `StoreError` (`*_store_locked`) while another open store owns it; close the store to release it.
 * @example
 * const store = await openExperienceStore({ file: '.actorloop/experiences.json', redact: createRedactor().text });
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
    ...defined({ redact: options.redact }),
    persistence: {
      save: (items) => doc.save({ v: EXPERIENCES_VERSION, items: [...items] }),
      close: () => doc.release(),
    },
  });
}
