/**
 * Persistence errors. Each names the file involved and says what to do; none of them ever
 * leads to a file being silently replaced by defaults.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';

interface FileErrorOptions extends ActorloopErrorOptions {
  readonly file: string;
}

abstract class FileError extends ActorloopError {
  readonly file: string;
  constructor(message: string, options: FileErrorOptions) {
    super(message, options);
    this.file = options.file;
  }
}

/** A store file does not parse, or a record in it fails its schema. The file is left untouched. */
export class CorruptFileError extends FileError {
  readonly code = 'corrupt_file' as const;
  readonly blame = 'runtime' as const;
  /** 1-based line of the first bad record in a JSONL file, when known. */
  readonly line: number | undefined;
  constructor(message: string, options: FileErrorOptions & { readonly line?: number }) {
    super(message, options);
    this.line = options.line;
  }
}

/** A record has a schema version this actorloop does not read: a newer actorloop's, or an earlier pre-release's. */
export class UnsupportedVersionError extends FileError {
  readonly code = 'unsupported_version' as const;
  readonly blame = 'user' as const;
}

/** Another live writer (this process or another) holds the run. */
export class RunLockedError extends FileError {
  readonly code = 'run_locked' as const;
  readonly blame = 'user' as const;
}

/** No persisted run with that id. */
export class RunNotFoundError extends FileError {
  readonly code = 'run_not_found' as const;
  readonly blame = 'user' as const;
}

/** The run already ended; there is nothing to resume. */
export class RunFinishedError extends FileError {
  readonly code = 'run_finished' as const;
  readonly blame = 'user' as const;
}

/** The run's log holds its journal but not what a resume rebuilds the run from (a journal-only store wrote it): it can be read, not resumed. */
export class RunNotResumableError extends FileError {
  readonly code = 'run_not_resumable' as const;
  readonly blame = 'user' as const;
}

/**
 * A resumed run asked for something its log did not record next: it is being resumed with an
 * agent configuration other than the one that started it (another hydrator, say).
 */
export class ReplayMismatchError extends ActorloopError {
  readonly code = 'replay_mismatch' as const;
  readonly blame = 'user' as const;
}
