// The module defines the agents (and strategies) this worker serves the same way the processes that start runs do.
import { runWorker } from '../../postgres/index.ts';
import { parseCommand, positiveInt, usageError } from '../args.ts';
import { loadAgentsModule } from '../agentsModule.ts';
import { DATABASE_FLAG, openRuntime, requiredDatabaseUrl } from '../durable.ts';

export async function workerCommand(args: readonly string[]): Promise<number> {
  const parsed = parseCommand(args, { ...DATABASE_FLAG, agents: { type: 'string' }, concurrency: { type: 'string' } });
  if (parsed.positionals.length > 0) throw usageError(`actorloop worker takes no positional arguments; got "${parsed.positionals.join(' ')}".`);
  const url = requiredDatabaseUrl(parsed);
  const modulePath = parsed.string('agents');
  if (modulePath === undefined) throw usageError('actorloop worker needs --agents MODULE: a module whose default export defines the agents, given the runtime.');
  const concurrencyFlag = parsed.string('concurrency');
  const concurrency = concurrencyFlag === undefined ? 10 : positiveInt(concurrencyFlag, '--concurrency');
  const define = await loadAgentsModule(modulePath);
  const runtime = openRuntime(url, concurrency + 4);
  try {
    await define(runtime, { runtime });
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
