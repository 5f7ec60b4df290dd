/** One writer per session: a lock file beside it makes a second open fail fast instead of losing turns. */
import { join, resolve } from 'node:path';
import { DEFAULTS } from '../core/defaults.ts';
import { CorruptFileError } from '../persistence/errors.ts';
import { openLockedDocument } from '../persistence/lockedDocument.ts';
import { emptySessionDocument, SESSION_VERSION, SessionDocument } from './document.ts';
import { buildSessionHandle, type SessionHandle } from './handle.ts';
import { toRedactFn, type SessionStoreOptions, type SessionStore } from './store.ts';
import { checkSessionId, sessionFileName } from './validate.ts';
import { SessionError } from './errors.ts';

export interface SessionFileOptions extends SessionStoreOptions {
  /** Default `.actorloop/sessions` in the working directory. */
  readonly dir?: string;
  /** Renewed in the background while open. Default `DEFAULTS.persistence.leaseMs`. */
  readonly leaseMs?: number;
}

export interface FileSessionStore extends SessionStore {
  readonly dir: string;
  /** Throws `SessionError` (`session_invalid_id`) for a bad id. */
  fileOf(id: string): string;
}

/**
 * `open` rejects with `CorruptFileError` or `StoreError` (`unsupported_version`) for a file that cannot be
 * trusted, and with `SessionError` (`session_locked`) while another handle, here or elsewhere, holds the session.
 * @example
 * const session = await openSessionStore({ dir: '.actorloop/sessions', redact: createRedactor() }).open('support-42');
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
