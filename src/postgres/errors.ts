/** Errors of the PostgreSQL runtime. Each names what it is about and says what to do. */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';

/** A row of the runtime's tables does not parse or fails its schema. It is left untouched. */
export class CorruptRowError extends ActorloopError {
  readonly code = 'corrupt_row' as const;
  readonly blame = 'runtime' as const;
  readonly table: string;
  /** The row's key, as `column=value` pairs. */
  readonly row: string;
  constructor(message: string, options: ActorloopErrorOptions & { readonly table: string; readonly row: string }) {
    super(message, options);
    this.table = options.table;
    this.row = options.row;
  }

  override toJSON(): ReturnType<ActorloopError['toJSON']> & { table: string; row: string } {
    return { ...super.toJSON(), table: this.table, row: this.row };
  }
}

/** The database's schema is older or newer than this actorloop's, or could not be reached. */
export class DatabaseSchemaError extends ActorloopError {
  readonly code = 'database_schema' as const;
  readonly blame = 'user' as const;
}

/** A durable run's event or effect cannot be applied (the agent is not registered with this worker, say). */
export class DurableRunError extends ActorloopError {
  readonly code = 'durable_run' as const;
  readonly blame = 'user' as const;
}

/** A model or tool call made by another worker failed there; its error, as recorded. */
export class EffectFailedError extends ActorloopError {
  readonly code = 'effect_failed' as const;
  readonly blame = 'tool' as const;
  /** The code of the original error, when it had one. */
  readonly originalCode: string | undefined;
  constructor(message: string, options: ActorloopErrorOptions & { readonly originalCode?: string }) {
    super(message, options);
    this.originalCode = options.originalCode;
  }
}
