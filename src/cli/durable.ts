// The database URL may hold a password: it is never printed.
import { createPostgresRuntime, type DurableRunInfo, type PostgresRuntime } from '../postgres/index.ts';
import { cliError, usageError, type ParsedCommand } from './args.ts';

export const DATABASE_FLAG = { 'database-url': { type: 'string' } } as const;

/** `--database-url` only, since a `DATABASE_URL` may belong to another application; `undefined` means the file store. */
export function durableUrl(parsed: ParsedCommand): string | undefined {
  const flag = parsed.string('database-url');
  if (flag !== undefined) {
    if (flag === '') throw usageError('--database-url needs a URL (postgres://…).');
    if (parsed.string('store') !== undefined) throw usageError('Give either --store DIR (a file store) or --database-url URL (PostgreSQL), not both.');
    return flag;
  }
  return undefined;
}

export function requiredDatabaseUrl(parsed: ParsedCommand): string {
  const url = parsed.string('database-url') ?? process.env['DATABASE_URL'];
  if (url === undefined || url === '') throw usageError('Give the database with --database-url postgres://… (or set DATABASE_URL).');
  return url;
}

/** The schema must already be there (`actorloop db migrate`). */
export function openRuntime(url: string, poolSize = 2): PostgresRuntime {
  return createPostgresRuntime({ connectionString: url, poolSize });
}

export async function requireDurableRun(runtime: PostgresRuntime, runId: string): Promise<DurableRunInfo> {
  const info = await runtime.getRun(runId);
  if (info === null) throw cliError(`No run ${runId} in the database: list its runs with \`actorloop runs --database-url …\`.`);
  return info;
}
