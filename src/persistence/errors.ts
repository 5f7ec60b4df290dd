/**
 * Persistence errors. Each names the file involved and says what to do; none of them ever
 * leads to a file being silently replaced by defaults.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';
import type { CodesOf } from '../core/errorCodes.ts';

/**
 * A store file does not parse, or a record in it fails its schema (`corrupt_file`). The file is
 * left untouched.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof CorruptFileError) console.log(e.file, e.line); }
 * ```
 */
export class CorruptFileError extends ActorloopError {
  declare readonly code: CodesOf<'CorruptFileError'>;
  readonly file: string;
  /** 1-based line of the first bad record in a JSONL file, when known. */
  readonly line: number | undefined;
  constructor(message: string, options: ActorloopErrorOptions & { readonly file: string; readonly line?: number }) {
    super('corrupt_file', message, options);
    this.file = options.file;
    this.line = options.line;
  }
}

/**
 * A store refused what was asked of it; `code` says why:
 * - `unsupported_version`: a record has a schema version this actorloop does not read (a newer
 *   actorloop's, or an earlier pre-release's);
 * - `run_locked`: another live writer (this process or another) holds the run;
 * - `run_not_found`: no persisted run with that id;
 * - `run_finished`: the run already ended, there is nothing to resume;
 * - `run_not_resumable`: the run's log holds its journal but not what a resume rebuilds the run
 *   from (a journal-only store wrote it): it can be read, not resumed;
 * - `knowledge_store_locked` / `experience_store_locked`: another writer has the store's file
 *   open, or took its lock over; close the other store first;
 * - `knowledge_store_closed` / `experience_store_closed`: the store was closed, open it again;
 * - `knowledge_untrusted`: the answer of a run that read untrusted content was not stored; check
 *   it, then store it with `trusted: true`;
 * - `experience_not_found`: no item has that `id`.
 * - `log_write_failed`: a run log's batch could not be written whole (a full disk, an I/O error);
 *   the part that landed was cut off again so later lines do not follow a torn one.
 *
 * @example
 * ```ts
 * try { await store.resume(runId); }
 * catch (e) { if (e instanceof StoreError && e.code === 'run_locked') console.log('another process runs it', e.file); }
 * ```
 */
export class StoreError extends ActorloopError {
  declare readonly code: CodesOf<'StoreError'>;
  /** The file involved, when there is one. */
  readonly file: string | undefined;
  /** For `experience_not_found`: the id asked for. */
  readonly id: string | undefined;
  constructor(code: CodesOf<'StoreError'>, message: string, options: ActorloopErrorOptions & { readonly file?: string; readonly id?: string } = {}) {
    super(code, message, options);
    this.file = options.file;
    this.id = options.id;
  }
}
