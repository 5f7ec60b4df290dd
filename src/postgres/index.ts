/** Durable agents on PostgreSQL: the runtime, its workers, its migrations and errors. */
export { createPostgresRuntime, type DurableRunInfo, type PostgresRuntime, type PostgresRuntimeOptions } from './runtime.ts';
export type { DurableStrategy, DurableStrategyDefinition } from './types.ts';
export { runWorker, type DurableWorker, type WorkerOptions } from './worker.ts';
export { SCHEMA_VERSION, type MigrationReport } from './migrations.ts';
export { DurableRunError } from './errors.ts';
