/**
 * The file-backed knowledge store: one lowdb JSON document `{ v, items }` through the shared
 * `DocumentFile` adapter — atomic temp-file-plus-rename writes, schema version checked, corrupt,
 * empty, NUL-filled, schema-invalid and `__proto__` content refused with a typed error and the
 * file left untouched. Only a missing file starts an empty store. One writer per file: a lock
 * file beside it makes a second open (another process, or this one) fail fast instead of losing
 * writes.
 */
import { DEFAULTS } from '../core/defaults.ts';
import { mkdirSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { Low } from 'lowdb';
import { DocumentFile } from '../persistence/documentFile.ts';
import { RunLockedError } from '../persistence/errors.ts';
import { acquireRunLock, type RunLock } from '../persistence/lock.ts';
import { KnowledgeStoreLockedError } from './errors.ts';
import { KNOWLEDGE_VERSION, KnowledgeDocument } from './item.ts';
import { buildKnowledgeStore, type KnowledgeStore } from './store.ts';

/** Options of `openKnowledgeStore`. */
export interface KnowledgeFileOptions {
  /** The JSON file. Default `.actorloop/knowledge.json` in the working directory. */
  readonly file?: string;
}

/**
 * Open (or create on first write) the knowledge file. Rejects with `CorruptFileError` or
 * `UnsupportedVersionError` (from the persistence module) when the file cannot be trusted, and
 * with `KnowledgeStoreLockedError` when another open store owns it. Close the store to release it.
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
  mkdirSync(dirname(file), { recursive: true });
  const lock = lockFile(file);
  try {
    // A crash mid-write can leave lowdb's temp file; it never holds acknowledged data. Removed
    // only now, under the lock, so it cannot be another writer's write in progress.
    rmSync(join(dirname(file), `.${basename(file)}.tmp`), { force: true });
    const adapter = new DocumentFile(file, KnowledgeDocument, KNOWLEDGE_VERSION);
    const db = new Low<KnowledgeDocument>(adapter, { v: KNOWLEDGE_VERSION, items: [] });
    await db.read();
    return buildKnowledgeStore(db.data.items, {
      save: async (items) => {
        db.data = { v: KNOWLEDGE_VERSION, items: [...items] };
        await db.write();
      },
      close: () => lock.release(),
    });
  } catch (error) {
    lock.release();
    throw error;
  }
}

function lockFile(file: string): RunLock {
  try {
    return acquireRunLock(`${file}.lock`, 'knowledge', { leaseMs: DEFAULTS.persistence.leaseMs });
  } catch (error) {
    if (!(error instanceof RunLockedError)) throw error;
    throw new KnowledgeStoreLockedError(
      `${file} is already open for writing by another knowledge store (${error.message.includes('(this process)') ? 'in this process' : 'in another process'}). ` +
        'Share one store object, or close the other one before opening the file again.',
      { file, cause: error },
    );
  }
}
