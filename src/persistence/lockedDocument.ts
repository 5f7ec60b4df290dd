/**
 * One small JSON document with one writer: a lock file beside it (a second open, in this process
 * or another, fails fast instead of losing writes) and the shared `DocumentFile` adapter (atomic
 * writes, version and schema checked, untrusted content refused with the file left untouched).
 * The knowledge and experience stores keep their items this way.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Low } from 'lowdb';
import type { z } from 'zod';
import { DEFAULTS } from '../core/defaults.ts';
import { DocumentFile } from './documentFile.ts';
import { RunLockedError } from './errors.ts';
import { acquireRunLock, type RunLock } from './lock.ts';

/** An open document: what it held, how to write it, and how to let the next writer in. */
export interface LockedDocument<T> {
  readonly data: T;
  save(data: T): Promise<void>;
  release(): void;
}

/**
 * Open `file` for writing: `empty` when it does not exist yet. Throws what `onLocked` makes of a
 * lock another store holds (`inThisProcess` says where), and the persistence module's
 * `CorruptFileError` / `UnsupportedVersionError` for content that cannot be trusted.
 *
 * @example
 * ```ts
 * const doc = await openLockedDocument(file, KnowledgeDocument, 1, { v: 1, items: [] }, 'knowledge', (inThisProcess, cause) => new KnowledgeStoreLockedError(…));
 * await doc.save({ ...doc.data, items });
 * doc.release();
 * ```
 */
export async function openLockedDocument<T extends { v: number }>(
  file: string,
  schema: z.ZodType<T>,
  version: number,
  empty: T,
  owner: string,
  onLocked: (inThisProcess: boolean, cause: RunLockedError) => Error,
): Promise<LockedDocument<T>> {
  mkdirSync(dirname(file), { recursive: true });
  let lock: RunLock;
  try {
    lock = acquireRunLock(`${file}.lock`, owner, { leaseMs: DEFAULTS.persistence.leaseMs });
  } catch (error) {
    if (!(error instanceof RunLockedError)) throw error;
    throw onLocked(error.message.includes('(this process)'), error);
  }
  try {
    // A crash mid-write can leave lowdb's temp file; it never holds acknowledged data. Removed
    // only now, under the lock, so it cannot be another writer's write in progress.
    rmSync(join(dirname(file), `.${basename(file)}.tmp`), { force: true });
    const db = new Low<T>(new DocumentFile(file, schema, version), empty);
    await db.read();
    return {
      data: db.data,
      save: async (data) => {
        db.data = data;
        await db.write();
      },
      release: () => lock.release(),
    };
  } catch (error) {
    lock.release();
    throw error;
  }
}
