/** One writer per file: a lock file beside it makes a second open fail fast instead of losing writes. */
import { join, resolve } from 'node:path';
import { openLockedDocument } from '../persistence/lockedDocument.ts';
import { storeLockedError } from '../persistence/storeErrors.ts';
import { KNOWLEDGE_VERSION, KnowledgeDocument } from './item.ts';
import { buildKnowledgeStore, type KnowledgeStore } from './store.ts';

export interface KnowledgeFileOptions {
  /** Default `.actorloop/knowledge.json` in the working directory. */
  readonly file?: string;
}

/**
 * Rejects with `CorruptFileError` or `StoreError` (`unsupported_version`) for a file that cannot be trusted, and
 * `StoreError` (`*_store_locked`) while another open store owns it; close the store to release it.
 * @example
 * const store = await openKnowledgeStore({ file: '.actorloop/knowledge.json' });
 */
export async function openKnowledgeStore(options: KnowledgeFileOptions = {}): Promise<KnowledgeStore> {
  const file = resolve(options.file ?? join('.actorloop', 'knowledge.json'));
  const doc = await openLockedDocument<KnowledgeDocument>(file, {
    schema: KnowledgeDocument,
    version: KNOWLEDGE_VERSION,
    empty: () => ({ v: KNOWLEDGE_VERSION, items: [] }),
    owner: 'knowledge',
    locked: (inThisProcess, cause) => storeLockedError('knowledge', file, inThisProcess, cause),
  });
  return buildKnowledgeStore(doc.data.items, {
    save: (items) => doc.save({ v: KNOWLEDGE_VERSION, items: [...items] }),
    close: () => doc.release(),
  });
}
