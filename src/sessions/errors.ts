/**
 * Session errors. A corrupt or future-version session file is reported with the shared
 * persistence errors (`CorruptFileError`, `UnsupportedVersionError`) and is never replaced by an
 * empty session; everything here is a misuse the caller can fix, and each message says how.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';

interface SessionErrorOptions extends ActorloopErrorOptions {
  /** The session involved; `undefined` when the id itself was refused before it was one. */
  readonly sessionId?: string;
}

/** What every session error carries: the session it is about. */
abstract class SessionError extends ActorloopError {
  readonly sessionId: string | undefined;
  constructor(message: string, options: SessionErrorOptions = {}) {
    super(message, options);
    this.sessionId = options.sessionId;
  }

  override toJSON() {
    return { ...super.toJSON(), ...(this.sessionId === undefined ? {} : { sessionId: this.sessionId }) };
  }
}

/**
 * Another open handle (in this process, or in another one) writes the session; two writers would
 * lose each other's turns. Also raised by a handle whose lock was taken over while it was open.
 *
 * @example
 * ```ts
 * try { await store.open('support-42'); }
 * catch (e) { if (e instanceof SessionLockedError) console.log('close the other handle first', e.file); }
 * ```
 */
export class SessionLockedError extends SessionError {
  readonly code = 'session_locked' as const;
  readonly blame = 'user' as const;
  /** The session's file; `undefined` for a memory store. */
  readonly file: string | undefined;
  constructor(message: string, options: SessionErrorOptions & { readonly file: string | undefined }) {
    super(message, options);
    this.file = options.file;
  }

  override toJSON() {
    return { ...super.toJSON(), ...(this.file === undefined ? {} : { file: this.file }) };
  }
}

/**
 * The handle was closed; open the session again to read or write it.
 *
 * @example
 * ```ts
 * await session.close();
 * session.messages(); // throws SessionClosedError
 * ```
 */
export class SessionClosedError extends SessionError {
  readonly code = 'session_closed' as const;
  readonly blame = 'user' as const;
}

/**
 * A session id that cannot name a session: not a string, empty, blank, too long, or holding
 * control characters.
 *
 * @example
 * ```ts
 * await store.open(''); // rejects with InvalidSessionIdError
 * ```
 */
export class InvalidSessionIdError extends SessionError {
  readonly code = 'session_invalid_id' as const;
  readonly blame = 'user' as const;
}

/**
 * A memory namespace or key that cannot be stored: not a string, empty, too long, or a name the
 * file format refuses (`__proto__`).
 *
 * @example
 * ```ts
 * session.memory('notes').get(''); // throws InvalidSessionKeyError
 * ```
 */
export class InvalidSessionKeyError extends SessionError {
  readonly code = 'session_invalid_key' as const;
  readonly blame = 'user' as const;
}

/**
 * A memory value that is not JSON (a function, `undefined`, a BigInt, a class instance, a cycle…),
 * or is too large or too deeply nested to store.
 *
 * @example
 * ```ts
 * await session.memory('notes').set('when', new Date()); // rejects: store date.toISOString() instead
 * ```
 */
export class InvalidSessionValueError extends SessionError {
  readonly code = 'session_invalid_value' as const;
  readonly blame = 'user' as const;
  /** Where in the value the problem is (`$` is the value itself). */
  readonly path: string;
  constructor(message: string, options: SessionErrorOptions & { readonly path: string }) {
    super(message, options);
    this.path = options.path;
  }
}

/**
 * A turn that cannot be appended: a bad run id, or messages that are not conversation messages.
 *
 * @example
 * ```ts
 * await session.appendTurn({ runId: '', messages: [] }); // rejects with InvalidSessionTurnError
 * ```
 */
export class InvalidSessionTurnError extends SessionError {
  readonly code = 'session_invalid_turn' as const;
  readonly blame = 'user' as const;
}

/**
 * The run's turn is already in the session: appending it again would repeat its messages (a
 * resumed run appending a second time, say).
 *
 * @example
 * ```ts
 * await session.appendTurn({ runId: 'run_1', messages });
 * await session.appendTurn({ runId: 'run_1', messages }); // rejects with SessionRunRecordedError
 * ```
 */
export class SessionRunRecordedError extends SessionError {
  readonly code = 'session_run_recorded' as const;
  readonly blame = 'user' as const;
}
