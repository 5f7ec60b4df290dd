/**
 * One small JSON document with one writer: a lock file beside it (a second open, in this process
 * or another, fails fast instead of losing writes) and the shared `DocumentFile` adapter (atomic
 * writes, version and schema checked, untrusted content refused with the file left untouched).
 * The knowledge, experience and session stores keep their documents this way.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Low } from 'lowdb';
import type { z } from 'zod';
import { DEFAULTS } from '../core/defaults.ts';
import { DocumentFile } from './documentFile.ts';
import { CorruptFileError, StoreError } from './errors.ts';
import { acquireRunLock, heldInThisProcess, type RunLock } from './lock.ts';

/** An open document: what it held, how to write it, and how to let the next writer in. */
export interface LockedDocument<T> {
  readonly data: T;
  /** Write it; refused with the `locked` error once another writer took the lock over. */
  save(data: T): Promise<void>;
  release(): void;
  /** Why this writer may no longer write (another process took its lock over), if it may not. */
  lost(): string | undefined;
}

/** How to open a document, and what to make of a lock another writer holds. */
export interface LockedDocumentOptions<T> {
  readonly schema: z.ZodType<T>;
  readonly version: number;
  /** The document when the file does not exist yet. */
  readonly empty: () => T;
  /** Who holds the lock, as other writers are told. */
  readonly owner: string;
  /** How long the claim lasts without renewal, in ms (renewed in the background while open). Default `DEFAULTS.persistence.leaseMs`. */
  readonly leaseMs?: number;
  /** The error for a lock another writer holds; `inThisProcess` says where it is. */
  readonly locked: (inThisProcess: boolean, cause: StoreError) => Error;
}

/**
 * Open `file` for writing. Throws what `locked` makes of a lock another writer holds, and the
 * persistence module's `CorruptFileError` / `StoreError` (`unsupported_version`) for content that cannot be
 * trusted.
 *
 * @example
 * ```ts
 * const doc = await openLockedDocument(file, { schema: KnowledgeDocument, version: 1, empty: () => ({ v: 1, items: [] }), owner: 'knowledge', locked: () => storeLockedError(…) });
 * await doc.save({ ...doc.data, items });
 * doc.release();
 * ```
 */
export async function openLockedDocument<T extends { v: number }>(file: string, options: LockedDocumentOptions<T>): Promise<LockedDocument<T>> {
  mkdirSync(dirname(file), { recursive: true });
  const lockFile = `${file}.lock`;
  // Asked before trying: once the attempt fails, the holder may already have let go.
  const here = heldInThisProcess(lockFile);
  let lost: string | undefined;
  let lock: RunLock;
  try {
    lock = acquireRunLock(lockFile, options.owner, { leaseMs: options.leaseMs ?? DEFAULTS.persistence.leaseMs, onLost: (reason) => (lost = reason) });
  } catch (error) {
    if (!(error instanceof StoreError && error.code === 'run_locked')) throw error;
    throw options.locked(here, error);
  }
  try {
    // A crash mid-write can leave lowdb's temp file; it never holds acknowledged data. Removed
    // only now, under the lock, so it cannot be another writer's write in progress.
    rmSync(join(dirname(file), `.${basename(file)}.tmp`), { force: true });
    const adapter = new DocumentFile(file, options.schema, options.version);
    const db = new Low<T>(adapter, options.empty());
    await read(db, file);
    return {
      data: db.data,
      save: async (data) => {
        // Another writer took the lock over (our lease went stale): writing now would overwrite its changes.
        if (lost !== undefined) throw options.locked(false, new StoreError('run_locked', `${file} is no longer this writer's: ${lost}`, { file: lockFile }));
        db.data = data;
        await db.write();
      },
      release: () => lock.release(),
      lost: () => lost,
    };
  } catch (error) {
    lock.release();
    throw error;
  }
}

/** Read the file; a value nested past what the schema check can walk is corruption too. */
async function read<T>(db: Low<T>, file: string): Promise<void> {
  try {
    await db.read();
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new CorruptFileError(`${file} is nested too deeply to check (${error.message}). It was left untouched.`, { file, cause: error });
  }
}
