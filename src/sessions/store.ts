import type { Redactor } from '../security/redactor.ts';
import { emptySessionDocument, type SessionDocument } from './document.ts';
import { buildSessionHandle, type RedactFn, type SessionHandle } from './handle.ts';
import { checkSessionId } from './validate.ts';
import { SessionError } from './errors.ts';

/** A missing session opens empty; it is stored on its first write. */
export interface SessionStore {
  /** Rejects with `SessionError` (`session_invalid_id`) for a bad id, and `SessionError` (`session_locked`) while another handle holds it. */
  open(id: string): Promise<SessionHandle>;
}

/** The agent's `Redactor`, or a function that returns the value with secrets replaced, shape kept. */
export type SessionRedact = Pick<Redactor, 'deep'> | RedactFn;

export interface SessionStoreOptions {
  /** Applied to every message, memory value and session id before it is kept. Default: nothing is redacted. */
  readonly redact?: SessionRedact;
}

export function toRedactFn(redact: SessionRedact | undefined): RedactFn {
  if (redact === undefined) return <T>(value: T): T => value;
  if (typeof redact === 'function') return redact;
  return <T>(value: T): T => redact.deep(value);
}

/**
 * Sessions last as long as the store object; otherwise it behaves like the file store.
 * @example
 * const session = await createMemorySessionStore().open('support-42');
 */
export function createMemorySessionStore(options: SessionStoreOptions = {}): SessionStore {
  const redact = toRedactFn(options.redact);
  const saved = new Map<string, SessionDocument>();
  const held = new Set<string>();
  return {
    open(id) {
      try {
        checkSessionId(id);
        if (held.has(id)) {
          throw new SessionError('session_locked', `Session "${id}" is already open in this memory store. Close the other handle before opening it again.`, {
            sessionId: id,
            file: undefined,
          });
        }
      } catch (error) {
        return Promise.reject(error);
      }
      held.add(id);
      // Copies in both directions, as a file would make: nothing a handle keeps is shared.
      const stored = saved.get(id);
      const document = stored === undefined ? emptySessionDocument(redact(id), Date.now()) : structuredClone(stored);
      let released = false;
      const handle = buildSessionHandle(
        id,
        document,
        {
          file: undefined,
          save: (next) => {
            saved.set(id, structuredClone(next));
            return Promise.resolve();
          },
          release: () => {
            if (!released) held.delete(id);
            released = true;
          },
          lost: () => undefined,
        },
        redact,
      );
      return Promise.resolve(handle);
    },
  };
}
