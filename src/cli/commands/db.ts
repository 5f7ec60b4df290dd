/** `actorloop db migrate`: bring a database to this actorloop's schema (graphile-worker's and ours). */
import { onePositional, parseCommand, usageError } from '../args.ts';
import { DATABASE_FLAG, openRuntime, requiredDatabaseUrl } from '../durable.ts';

export async function dbCommand(args: readonly string[]): Promise<number> {
  const parsed = parseCommand(args, DATABASE_FLAG);
  const action = onePositional(parsed, 'action', 'db');
  if (action !== 'migrate') throw usageError(`actorloop db knows "migrate", not "${action}".`);
  const runtime = openRuntime(requiredDatabaseUrl(parsed));
  try {
    const report = await runtime.migrate();
    if (parsed.common.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else if (report.applied.length === 0) process.stdout.write(`The actorloop schema is up to date (version ${report.to}).\n`);
    else process.stdout.write(`Migrated the actorloop schema from version ${report.from} to ${report.to}:\n${report.applied.map((line) => `  ${line}`).join('\n')}\n`);
    return 0;
  } finally {
    await runtime.close();
  }
}
