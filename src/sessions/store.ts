/**
 * Session stores: where sessions live between runs. The memory store keeps them for the life of
 * the store object (tests, short-lived agents); the file store (`openSessionStore`) keeps one
 * JSON file per session. Both open a session for one writer at a time and pass everything they
 * keep through the same redaction.
 */
import type { Redactor } from '../security/redactor.ts';
import { emptySessionDocument, type SessionDocument } from './document.ts';
import { buildSessionHandle, type RedactFn, type SessionHandle } from './handle.ts';
import { checkSessionId } from './validate.ts';
import { SessionError } from './errors.ts';

/**
 * Sessions by id. A missing session opens empty; it is stored on its first write.
 *
 * @example
 * ```ts
 * const store: SessionStore = createMemorySessionStore();
 * const session = await store.open('support-42');
 * session.messages(); // []
 * await session.close();
 * ```
 */
export interface SessionStore {
  /**
   * Open the session `id` for writing. Rejects with `SessionError` (`session_invalid_id`) for an id that cannot
   * name a session, and with `SessionError` (`session_locked`) while another handle holds it.
   */
  open(id: string): Promise<SessionHandle>;
}

/**
 * How stored text is scrubbed of secrets: the agent's `Redactor` (or anything with its `deep`),
 * or a function with the same contract (returns the value with secrets replaced, shape kept).
 *
 * @example
 * ```ts
 * const redact: SessionRedact = createRedactor({ secrets: [process.env.MY_TOKEN ?? ''] });
 * ```
 */
export type SessionRedact = Pick<Redactor, 'deep'> | RedactFn;

/** Options shared by both stores. */
export interface SessionStoreOptions {
  /**
   * Applied to every message, memory value and session id before it is kept, so a secret never
   * reaches the store. Default: nothing is redacted.
   */
  readonly redact?: SessionRedact;
}

/**
 * The redaction as one function (identity when none is configured).
 *
 * @example
 * ```ts
 * toRedactFn(createRedactor())('key sk-abcdef0123456789'); // 'key [REDACTED]'
 * ```
 */
export function toRedactFn(redact: SessionRedact | undefined): RedactFn {
  if (redact === undefined) return <T>(value: T): T => value;
  if (typeof redact === 'function') return redact;
  return <T>(value: T): T => redact.deep(value);
}

/**
 * A store kept in memory: sessions last as long as the store object. Behaves like the file store
 * (one writer per session, redaction, copies in and out) without touching the disk.
 *
 * @example
 * ```ts
 * const store = createMemorySessionStore();
 * const session = await store.open('support-42');
 * await session.memory('notes').set('plan', 'answer in French');
 * await session.close();
 * (await store.open('support-42')).memory('notes').get('plan'); // 'answer in French'
 * ```
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
