/** One small JSON document with one writer: a lock file beside it makes a second open fail fast instead of losing writes. */
import { mkdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Low } from 'lowdb';
import type { z } from 'zod';
import { DEFAULTS } from '../core/defaults.ts';
import { DocumentFile } from './documentFile.ts';
import { CorruptFileError, StoreError } from './errors.ts';
import { acquireRunLock, heldInThisProcess, type RunLock } from './lock.ts';

export interface LockedDocument<T> {
  readonly data: T;
  /** Refused with the `locked` error once another writer took the lock over. */
  save(data: T): Promise<void>;
  release(): void;
  lost(): string | undefined;
}

export interface LockedDocumentOptions<T> {
  readonly schema: z.ZodType<T>;
  readonly version: number;
  readonly empty: () => T;
  /** Who holds the lock, as other writers are told. */
  readonly owner: string;
  /** Renewed in the background while open. Default `DEFAULTS.persistence.leaseMs`. */
  readonly leaseMs?: number;
  readonly locked: (inThisProcess: boolean, cause: StoreError) => Error;
}

/** Throws what `locked` makes of a lock another writer holds, and CorruptFileError / StoreError (`unsupported_version`) for untrusted content. */
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
    // lowdb's temp file left by a crash holds no acknowledged data; removed only under the lock, so
    // it cannot be another writer's write in progress.
    rmSync(join(dirname(file), `.${basename(file)}.tmp`), { force: true });
    const adapter = new DocumentFile(file, options.schema, options.version);
    const db = new Low<T>(adapter, options.empty());
    await read(db, file);
    return {
      data: db.data,
      save: async (data) => {
        // Another writer took the lock over: writing now would overwrite its changes.
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

/** A value nested past what the schema check can walk is corruption too. */
async function read<T>(db: Low<T>, file: string): Promise<void> {
  try {
    await db.read();
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new CorruptFileError(`${file} is nested too deeply to check (${error.message}). It was left untouched.`, { file, cause: error });
  }
}
