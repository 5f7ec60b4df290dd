/**
 * The file-backed session store: one lowdb JSON document per session through the shared
 * `DocumentFile` adapter — atomic temp-file-plus-rename writes, schema version checked, corrupt,
 * empty, NUL-filled, schema-invalid and `__proto__` content refused with a typed error and the
 * file left untouched. Only a missing file is a new session. One writer per session: a lock file
 * beside it makes a second open (another process, or this one) fail fast instead of losing turns.
 */
import { join, resolve } from 'node:path';
import { DEFAULTS } from '../core/defaults.ts';
import { CorruptFileError } from '../persistence/errors.ts';
import { openLockedDocument } from '../persistence/lockedDocument.ts';
import { emptySessionDocument, SESSION_VERSION, SessionDocument } from './document.ts';
import { buildSessionHandle, type SessionHandle } from './handle.ts';
import { toRedactFn, type SessionStoreOptions, type SessionStore } from './store.ts';
import { checkSessionId, sessionFileName } from './validate.ts';
import { SessionError } from './errors.ts';

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
  /** The file that holds (or will hold) session `id`; throws `SessionError` (`session_invalid_id`) for a bad id. */
  fileOf(id: string): string;
}

/**
 * A store of sessions in `dir`, one file each. Nothing is read until a session is opened;
 * `open` rejects with `CorruptFileError` or `StoreError` (`unsupported_version`) (from the persistence
 * module) when a session's file cannot be trusted, and with `SessionError` (`session_locked`) while another
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
    const storedId = redact(id);
    const doc = await openLockedDocument(file, {
      schema: SessionDocument,
      version: SESSION_VERSION,
      empty: () => emptySessionDocument(storedId, Date.now()),
      owner: `session ${id}`,
      leaseMs,
      locked: (inThisProcess, cause) =>
        new SessionError('session_locked',
          `Session "${id}" (${file}) is already open for writing ${inThisProcess ? 'in this process' : 'by another process'}. ` +
            "Close the other handle before opening the session again; two writers would lose each other's turns.",
          { sessionId: id, file, cause },
        ),
    });
    if (doc.data.id !== storedId) {
      doc.release();
      throw new CorruptFileError(
        `${file} holds session "${doc.data.id}", not "${storedId}": it was copied or renamed by hand. It was left untouched; move it back or remove it.`,
        { file },
      );
    }
    return buildSessionHandle(id, doc.data, { file, save: (next) => doc.save(next), release: () => doc.release(), lost: () => doc.lost() }, redact);
  }

  return { dir, fileOf, open };
}
