/**
 * Commands that reach runs kept in PostgreSQL: which database, a runtime on it for the command's
 * length, and a run by id. The URL may hold a password: it is never printed.
 */
import { createPostgresRuntime, type DurableRunInfo, type PostgresRuntime } from '../postgres/index.ts';
import { cliError, usageError, type ParsedCommand } from './args.ts';

/** The flag every command that can reach PostgreSQL runs declares. */
export const DATABASE_FLAG = { 'database-url': { type: 'string' } } as const;

/**
 * The database a command that also reads file stores reads runs from: `--database-url` only (a
 * `DATABASE_URL` may belong to another application); `undefined` means the file store.
 *
 * @example
 * ```ts
 * const url = durableUrl(parsed); // undefined: read the file store
 * ```
 */
export function durableUrl(parsed: ParsedCommand): string | undefined {
  const flag = parsed.string('database-url');
  if (flag !== undefined) {
    if (flag === '') throw usageError('--database-url needs a URL (postgres://…).');
    if (parsed.string('store') !== undefined) throw usageError('Give either --store DIR (a file store) or --database-url URL (PostgreSQL), not both.');
    return flag;
  }
  return undefined;
}

/**
 * `--database-url`, else `DATABASE_URL`, else a usage error (commands that only work on PostgreSQL).
 *
 * @example
 * ```ts
 * const url = requiredDatabaseUrl(parsed);
 * ```
 */
export function requiredDatabaseUrl(parsed: ParsedCommand): string {
  const url = parsed.string('database-url') ?? process.env['DATABASE_URL'];
  if (url === undefined || url === '') throw usageError('Give the database with --database-url postgres://… (or set DATABASE_URL).');
  return url;
}

/**
 * A runtime on `url` for one command: a couple of connections, and the schema must be there
 * (`actorloop db migrate` puts it there).
 *
 * @example
 * ```ts
 * const runtime = openRuntime(url);
 * try { … } finally { await runtime.close(); }
 * ```
 */
export function openRuntime(url: string, poolSize = 2): PostgresRuntime {
  return createPostgresRuntime({ connectionString: url, poolSize });
}

/**
 * A durable run's row, or a clear error naming the run (not the database, whose URL may hold a password).
 *
 * @example
 * ```ts
 * const info = await requireDurableRun(runtime, 'run_…');
 * ```
 */
export async function requireDurableRun(runtime: PostgresRuntime, runId: string): Promise<DurableRunInfo> {
  const info = await runtime.getRun(runId);
  if (info === null) throw cliError(`No run ${runId} in the database: list its runs with \`actorloop runs --database-url …\`.`);
  return info;
}
