/**
 * The file-backed knowledge store: one lowdb JSON document `{ v, items }` through the shared
 * `DocumentFile` adapter — atomic temp-file-plus-rename writes, schema version checked, corrupt,
 * empty, NUL-filled, schema-invalid and `__proto__` content refused with a typed error and the
 * file left untouched. Only a missing file starts an empty store. One writer per file: a lock
 * file beside it makes a second open (another process, or this one) fail fast instead of losing
 * writes.
 */
import { join, resolve } from 'node:path';
import { openLockedDocument } from '../persistence/lockedDocument.ts';
import { storeLockedError } from '../persistence/storeErrors.ts';
import { KNOWLEDGE_VERSION, KnowledgeDocument } from './item.ts';
import { buildKnowledgeStore, type KnowledgeStore } from './store.ts';

/** Options of `openKnowledgeStore`. */
export interface KnowledgeFileOptions {
  /** The JSON file. Default `.actorloop/knowledge.json` in the working directory. */
  readonly file?: string;
}

/**
 * Open (or create on first write) the knowledge file. Rejects with `CorruptFileError` or
 * `StoreError` (`unsupported_version`) (from the persistence module) when the file cannot be trusted, and
 * with a `StoreError` (code `knowledge_store_locked`) when another open store owns it. Close the store to release it.
 *
 * @example
 * ```ts
 * const store = await openKnowledgeStore({ file: '.actorloop/knowledge.json' });
 * await store.add({ subject: 'Earth', predicate: 'has', object: 'one moon', confidence: 0.95 });
 * await store.close();
 * ```
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
