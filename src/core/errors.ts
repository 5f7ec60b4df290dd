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

/** Who has to act to fix an error. */
export type ErrorBlame = 'user' | 'model' | 'provider' | 'tool' | 'runtime';

export interface ActorloopErrorOptions {
  readonly cause?: unknown;
  readonly runId?: string;
}

/** Base class of every error actorloop throws or reports. */
export abstract class ActorloopError extends Error {
  abstract readonly code: string;
  abstract readonly blame: ErrorBlame;
  /** The run this error happened in, when there was one: pass it to `resume` or look it up in the journal. */
  runId: string | undefined;

  constructor(message: string, options: ActorloopErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.runId = options.runId;
  }

  /** A plain, JSON-safe view for journals and events (no stack, no cause object graph). */
  toJSON(): { name: string; code: string; blame: ErrorBlame; message: string; runId?: string } {
    return {
      name: this.name,
      code: this.code,
      blame: this.blame,
      message: this.message,
      ...(this.runId === undefined ? {} : { runId: this.runId }),
    };
  }
}

/** Bad configuration or API misuse by the caller. */
export class ConfigurationError extends ActorloopError {
  readonly code = 'configuration' as const;
  readonly blame = 'user' as const;
}

/**
 * The model did something the loop cannot use (malformed tool arguments after every repair
 * turn, an unusable reply). Carries the run id so the run can be inspected.
 */
export class ModelBehaviorError extends ActorloopError {
  readonly code = 'model_behavior' as const;
  readonly blame = 'model' as const;
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
