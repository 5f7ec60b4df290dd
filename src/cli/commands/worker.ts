/**
 * `actorloop worker --agents MODULE`: a worker process of a durable runtime. The module's default
 * export is called with the runtime and defines the agents (and strategies) this worker serves,
 * the same way the processes that start runs define them.
 *
 * @example
 * ```ts
 * // agents.ts
 * export default (runtime) => createAgent({ id: 'researcher', model, tools, runtime });
 * ```
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createPostgresRuntime, runWorker, type PostgresRuntime } from '../../postgres/index.ts';
import { CliError, parseCommand, positiveInt, UsageError, type ParsedCommand } from '../args.ts';

/** `--database-url`, else `DATABASE_URL`, else a usage error. */
export function databaseUrl(parsed: ParsedCommand): string {
  const url = parsed.string('database-url') ?? process.env['DATABASE_URL'];
  if (url === undefined || url === '') throw new UsageError('Give the database with --database-url postgres://… (or set DATABASE_URL).');
  return url;
}

export async function workerCommand(args: readonly string[]): Promise<number> {
  const parsed = parseCommand(args, { 'database-url': { type: 'string' }, agents: { type: 'string' }, concurrency: { type: 'string' } });
  if (parsed.positionals.length > 0) throw new UsageError(`actorloop worker takes no positional arguments; got "${parsed.positionals.join(' ')}".`);
  const url = databaseUrl(parsed);
  const modulePath = parsed.string('agents');
  if (modulePath === undefined) throw new UsageError('actorloop worker needs --agents MODULE: a module whose default export defines the agents, given the runtime.');
  const concurrencyFlag = parsed.string('concurrency');
  const concurrency = concurrencyFlag === undefined ? 10 : positiveInt(concurrencyFlag, '--concurrency');
  const define = await loadDefinitions(modulePath);
  const runtime = createPostgresRuntime({ connectionString: url, poolSize: concurrency + 4 });
  try {
    await define(runtime);
    const worker = await runWorker({ runtime, concurrency });
    process.stdout.write(`actorloop worker ${worker.id}: serving ${worker.agents.join(', ') || 'no agents'} (${concurrency} runs at once). Ctrl-C stops it.\n`);
    await new Promise<void>((done) => {
      process.once('SIGINT', done);
      process.once('SIGTERM', done);
    });
    await worker.stop();
    return 0;
  } finally {
    await runtime.close();
  }
}

async function loadDefinitions(path: string): Promise<(runtime: PostgresRuntime) => unknown> {
  let loaded: { default?: unknown };
  try {
    loaded = (await import(pathToFileURL(resolve(path)).href)) as { default?: unknown };
  } catch (error) {
    throw new CliError(`Could not load the agents module ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const define = loaded.default;
  if (typeof define !== 'function') throw new CliError(`${path} must export by default a function (runtime) => … that creates its agents with createAgent({ runtime }).`);
  return define as (runtime: PostgresRuntime) => unknown;
}
