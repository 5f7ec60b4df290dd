/**
 * The one error hierarchy of actorloop.
 *
 * Every error has a fixed `name` (the class name), a literal `code`, a `blame` saying whose
 * move it is to fix it, an optional `cause`, and — when it happened inside a run — the `runId`
 * to resume or inspect. Messages say what happened *and* what to do about it.
 *
 * @example
 * ```ts
 * try { await agent.run('task'); }
 * catch (e) {
 *   if (e instanceof ActorloopError && e.blame === 'provider') console.log('retry later', e.runId);
 * }
 * ```
 */

import { ERROR_CODES, type CodesOf, type ErrorBlame, type ErrorCode } from './errorCodes.ts';
import { defined } from './defined.ts';

export type { ErrorBlame, ErrorCode } from './errorCodes.ts';

export interface ActorloopErrorOptions {
  readonly cause?: unknown;
  readonly runId?: string;
}

/**
 * Base class of every error actorloop throws or reports. Subclasses narrow `code` to their own
 * codes; `blame` always comes from the code's row in `ERROR_CODES`.
 */
export abstract class ActorloopError extends Error {
  readonly code: ErrorCode;
  readonly blame: ErrorBlame;
  /** The run this error happened in, when there was one: pass it to `resume` or look it up in the journal. */
  runId: string | undefined;

  constructor(code: ErrorCode, message: string, options: ActorloopErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.blame = ERROR_CODES[code].blame;
    this.runId = options.runId;
  }

  /** A plain, JSON-safe view for journals and events (no stack, no cause object graph). */
  toJSON(): { name: string; code: string; blame: ErrorBlame; message: string; runId?: string } {
    return {
      name: this.name,
      code: this.code,
      blame: this.blame,
      message: this.message,
      ...defined({ runId: this.runId }),
    };
  }
}

/**
 * Bad configuration or API misuse by the caller; `code` is `configuration` unless a more precise
 * one applies (`missing_configuration`, `usage`, `cli`, `invalid_decision`, `replay_mismatch`).
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof ConfigurationError && e.code === 'missing_configuration') console.log(e.variables); }
 * ```
 */
export class ConfigurationError extends ActorloopError {
  declare readonly code: CodesOf<'ConfigurationError'>;
  /** For `missing_configuration`: the environment variables that would fix it. */
  readonly variables: readonly string[] | undefined;

  constructor(message: string, options: ActorloopErrorOptions & { readonly code?: CodesOf<'ConfigurationError'>; readonly variables?: readonly string[] } = {}) {
    super(options.code ?? 'configuration', message, options);
    this.variables = options.variables;
  }
}

/**
 * The model did something the loop cannot use (malformed tool arguments after every repair
 * turn, an unusable reply, an experience learner's answer that is not a list of candidates).
 * Carries the run id so the run can be inspected.
 */
export class ModelBehaviorError extends ActorloopError {
  declare readonly code: CodesOf<'ModelBehaviorError'>;

  constructor(message: string, options: ActorloopErrorOptions & { readonly code?: CodesOf<'ModelBehaviorError'> } = {}) {
    super(options.code ?? 'model_behavior', message, options);
  }
}

/** Turn any thrown value (Error, string, null, object) into a short, printable message. */
export function describeError(value: unknown): string {
  if (value instanceof Error) return value.message || value.name;
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
