/**
 * Session errors. A corrupt or future-version session file is reported with the shared
 * persistence errors (`CorruptFileError`, a `StoreError` with code `unsupported_version`) and is
 * never replaced by an empty session; everything here is a misuse the caller can fix, and each
 * message says how.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';
import type { CodesOf } from '../core/errorCodes.ts';
import { defined } from '../core/defined.ts';

interface SessionErrorOptions extends ActorloopErrorOptions {
  /** The session involved; `undefined` when the id itself was refused before it was one. */
  readonly sessionId?: string;
  /** For `session_locked`: the session's file (`undefined` for a memory store). */
  readonly file?: string | undefined;
  /** For `session_invalid_value`: where in the value the problem is (`$` is the value itself). */
  readonly path?: string;
}

/**
 * A session refused what was asked of it; `code` says why:
 * - `session_locked`: another open handle (in this process, or in another one) writes the
 *   session, or took over the lock of this one; two writers would lose each other's turns;
 * - `session_closed`: the handle was closed, open the session again;
 * - `session_invalid_id`: not a string, empty, blank, too long, or holding control characters;
 * - `session_invalid_key`: a memory namespace or key that is not a string, empty, too long, or
 *   a name the file format refuses (`__proto__`);
 * - `session_invalid_value`: a memory value that is not JSON (a function, `undefined`, a
 *   BigInt, a class instance, a cycle…), or too large or deep to store; `path` says where;
 * - `session_invalid_turn`: a bad run id, or messages that are not conversation messages;
 * - `session_run_recorded`: the run's turn is already in the session.
 *
 * @example
 * ```ts
 * try { await store.open('support-42'); }
 * catch (e) { if (e instanceof SessionError && e.code === 'session_locked') console.log('close the other handle first', e.file); }
 * ```
 */
export class SessionError extends ActorloopError {
  declare readonly code: CodesOf<'SessionError'>;
  readonly sessionId: string | undefined;
  readonly file: string | undefined;
  readonly path: string | undefined;

  constructor(code: CodesOf<'SessionError'>, message: string, options: SessionErrorOptions = {}) {
    super(code, message, options);
    this.sessionId = options.sessionId;
    this.file = options.file;
    this.path = options.path;
  }

  override toJSON() {
    return {
      ...super.toJSON(),
      ...defined({ sessionId: this.sessionId }),
      ...(this.code === 'session_locked' && this.file !== undefined ? { file: this.file } : {}),
    };
  }
}
