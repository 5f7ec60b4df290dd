/** Errors of the PostgreSQL runtime. Each names what it is about and says what to do. */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';
import type { CodesOf } from '../core/errorCodes.ts';

interface DurableRunErrorOptions extends ActorloopErrorOptions {
  readonly code?: CodesOf<'DurableRunError'>;
  readonly table?: string;
  readonly row?: string;
  readonly originalCode?: string;
}

/**
 * The PostgreSQL runtime could not go on; `code` says why:
 * - `durable_run`: a durable run's event or effect cannot be applied (its agent is not
 *   registered with this worker, say);
 * - `database_schema`: the database's schema is older or newer than this actorloop's, or could
 *   not be reached: run `actorloop db migrate`;
 * - `corrupt_row`: a row of the runtime's tables does not parse or fails its schema; it is left
 *   untouched, and `table` and `row` name it;
 * - `effect_failed`: a model or tool call made by another worker failed there; `originalCode`
 *   is the code of its error, as recorded;
 * - `definition_mismatch`: the worker's agent of the run's id has another output schema or other
 *   tools than the caller's that queued it; deploy the same definition to callers and workers;
 * - `missing_blob`: the run refers to an image or file whose bytes are not in the database;
 *   `table` and `row` name the row that should hold them.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof DurableRunError && e.code === 'corrupt_row') console.log(e.table, e.row); }
 * ```
 */
export class DurableRunError extends ActorloopError {
  declare readonly code: CodesOf<'DurableRunError'>;
  /** For `corrupt_row` and `missing_blob`: the table. */
  readonly table: string | undefined;
  /** For `corrupt_row` and `missing_blob`: the row's key, as `column=value` pairs. */
  readonly row: string | undefined;
  /** For `effect_failed`: the code of the original error, when it had one. */
  readonly originalCode: string | undefined;

  constructor(message: string, options: DurableRunErrorOptions = {}) {
    super(options.code ?? 'durable_run', message, options);
    this.table = options.table;
    this.row = options.row;
    this.originalCode = options.originalCode;
  }

  /** `corrupt_row`: the row `table`/`row` does not parse or fails its schema. */
  static corruptRow(message: string, options: ActorloopErrorOptions & { readonly table: string; readonly row: string }): DurableRunError {
    return new DurableRunError(message, { ...options, code: 'corrupt_row' });
  }

  /** `database_schema`: the schema is not this actorloop's, or the database could not be reached. */
  static schema(message: string, options: ActorloopErrorOptions = {}): DurableRunError {
    return new DurableRunError(message, { ...options, code: 'database_schema' });
  }

  /** `definition_mismatch`: the worker's agent is not the one the caller queued the run for. */
  static definitionMismatch(message: string, options: ActorloopErrorOptions = {}): DurableRunError {
    return new DurableRunError(message, { ...options, code: 'definition_mismatch' });
  }

  /** `effect_failed`: a call made by another worker failed there. */
  static effectFailed(message: string, options: ActorloopErrorOptions & { readonly originalCode?: string }): DurableRunError {
    return new DurableRunError(message, { ...options, code: 'effect_failed' });
  }

  override toJSON() {
    const json = super.toJSON();
    return this.code === 'corrupt_row' || this.code === 'missing_blob' ? { ...json, table: this.table ?? '', row: this.row ?? '' } : json;
  }
}
