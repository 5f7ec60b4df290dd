/**
 * The file-backed session store: one lowdb JSON document per session through the shared
 * `DocumentFile` adapter — atomic temp-file-plus-rename writes, schema version checked, corrupt,
 * empty, NUL-filled, schema-invalid and `__proto__` content refused with a typed error and the
 * file left untouched. Only a missing file is a new session. One writer per session: a lock file
 * beside it makes a second open (another process, or this one) fail fast instead of losing turns.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { DEFAULTS } from '../core/defaults.ts';
import { DocumentFile } from '../persistence/documentFile.ts';
import { CorruptFileError, RunLockedError } from '../persistence/errors.ts';
import { acquireRunLock, heldInThisProcess, type RunLock } from '../persistence/lock.ts';
import { emptySessionDocument, SESSION_VERSION, SessionDocument } from './document.ts';
import { SessionLockedError } from './errors.ts';
import { buildSessionHandle, type SessionHandle } from './handle.ts';
import { toRedactFn, type SessionStoreOptions, type SessionStore } from './store.ts';
import { checkSessionId, sessionFileName } from './validate.ts';

/** Options of `openSessionStore`. */
export interface SessionFileOptions extends SessionStoreOptions {
  /** The folder of session files. Default `.actorloop/sessions` in the working directory. */
  readonly dir?: string;
  /**
   * How long an open handle's claim on its session lasts without renewal, in ms (renewed in the
   * background while open). Default `DEFAULTS.persistence.leaseMs`.
   */
  readonly leaseMs?: number;
}

/**
 * A session store over a folder of JSON files.
 *
 * @example
 * ```ts
 * const store = openSessionStore({ dir: '.actorloop/sessions' });
 * store.fileOf('support-42'); // '/abs/.actorloop/sessions/support-42-<hash>.json'
 * ```
 */
export interface FileSessionStore extends SessionStore {
  /** The folder, absolute. */
  readonly dir: string;
  /** The file that holds (or will hold) session `id`; throws `InvalidSessionIdError` for a bad id. */
  fileOf(id: string): string;
}

/**
 * A store of sessions in `dir`, one file each. Nothing is read until a session is opened;
 * `open` rejects with `CorruptFileError` or `UnsupportedVersionError` (from the persistence
 * module) when a session's file cannot be trusted, and with `SessionLockedError` while another
 * handle, here or in another process, holds the session.
 *
 * @example
 * ```ts
 * const store = openSessionStore({ dir: '.actorloop/sessions', redact: createRedactor() });
 * const session = await store.open('support-42');
 * await session.appendTurn({ runId: 'run_1', messages: [{ role: 'user', content: 'hi' }] });
 * await session.close();
 * ```
 */
export function openSessionStore(options: SessionFileOptions = {}): FileSessionStore {
  const dir = resolve(options.dir ?? join('.actorloop', 'sessions'));
  const leaseMs = options.leaseMs ?? DEFAULTS.persistence.leaseMs;
  const redact = toRedactFn(options.redact);
  const fileOf = (id: string): string => join(dir, sessionFileName(id, redact));

  async function open(id: string): Promise<SessionHandle> {
    checkSessionId(id);
    const file = fileOf(id);
    mkdirSync(dir, { recursive: true });
    let lost: string | undefined;
    const lock = lockSession(id, file, leaseMs, (reason) => (lost = reason));
    try {
      // A crash mid-write can leave lowdb's temp file; it never holds acknowledged data. Removed
      // only now, under the lock, so it cannot be another writer's write in progress.
      rmSync(join(dirname(file), `.${basename(file)}.tmp`), { force: true });
      const adapter = new DocumentFile(file, SessionDocument, SESSION_VERSION);
      const storedId = redact(id);
      const document = (await readDocument(adapter)) ?? emptySessionDocument(storedId, Date.now());
      if (document.id !== storedId) {
        throw new CorruptFileError(
          `${file} holds session "${document.id}", not "${storedId}": it was copied or renamed by hand. It was left untouched; move it back or remove it.`,
          { file },
        );
      }
      return buildSessionHandle(id, document, { file, save: (next) => adapter.write(next), release: () => lock.release(), lost: () => lost }, redact);
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  return { dir, fileOf, open };
}

/** Read a session file; a value nested past what the schema check can walk is corruption too. */
async function readDocument(adapter: DocumentFile<SessionDocument>): Promise<SessionDocument | null> {
  try {
    return await adapter.read();
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new CorruptFileError(`${adapter.file} is nested too deeply to check (${error.message}). It was left untouched.`, { file: adapter.file, cause: error });
  }
}

function lockSession(id: string, file: string, leaseMs: number, onLost: (reason: string) => void): RunLock {
  const lockFile = `${file}.lock`;
  // Asked before trying: once the attempt fails, the holder may already have let go.
  const here = heldInThisProcess(lockFile);
  try {
    return acquireRunLock(lockFile, `session ${id}`, { leaseMs, onLost });
  } catch (error) {
    if (!(error instanceof RunLockedError)) throw error;
    throw new SessionLockedError(
      `Session "${id}" (${file}) is already open for writing ${here ? 'in this process' : 'by another process'}. ` +
        'Close the other handle before opening the session again; two writers would lose each other\'s turns.',
      { sessionId: id, file, cause: error },
    );
  }
}
