/**
 * A worker process of the PostgreSQL section: `node <bench flags> postgresWorker.ts <url> <options json>`.
 * It prints `ready` once it takes jobs; on SIGTERM it stops cleanly and prints `counts <json>`,
 * the bench agent's calls it made (CallCounts).
 */
import { createPostgresRuntime, runWorker } from '../src/postgres/index.ts';
import { benchAgent, newCallCounts, waitingAgent } from './postgresAgents.ts';

export interface PostgresWorkerOptions {
  readonly concurrency: number;
  readonly delayMs: number;
}

const [url, json] = process.argv.slice(2);
const options = JSON.parse(json ?? '{}') as PostgresWorkerOptions;
// graphile-worker needs a few connections of its own besides one per job.
const runtime = createPostgresRuntime({ connectionString: url, poolSize: options.concurrency + 4 });
const counts = newCallCounts();
benchAgent(runtime, { delayMs: options.delayMs, counts });
// Served too, so the runs waiting on a human are runs these workers would carry on.
waitingAgent(runtime);
const worker = await runWorker({ runtime, concurrency: options.concurrency, pollIntervalMs: 500 });
process.stdout.write(`ready ${worker.id}\n`);
process.on('SIGTERM', () => {
  void (async () => {
    await worker.stop();
    await runtime.close();
    process.stdout.write(`counts ${JSON.stringify(counts)}\n`, () => process.exit(0));
  })();
});
