/**
 * Scenario: the durable runtime on PostgreSQL (src/postgres). On a throwaway cluster
 * (scripts/postgresCluster.ts, fsync off):
 *
 * - throughput: N react-10 agents with a 5 ms model, submitted at once by this process (the
 *   client), run by 1, 2 (and 4) worker processes, each on a fresh database; with the CPU each
 *   side used (workers, the server, the client), and per agent the server's CPU, transactions
 *   and WAL (from pg_stat_database and pg_stat_wal), step latency and run latency;
 * - the same batch on one worker with thousands of runs waiting on a human already in the
 *   database (made through the public API), against the batch without them;
 * - optionally the one-worker batch again on a second cluster with fsync on;
 * - cost per iteration: sequential react-10 runs with a 0 ms model through the runtime (an
 *   in-process worker) vs the same agent in memory.
 *
 * Only the public API of src/postgres and the statistics views are used, except for step
 * latency (the runtime's own table; n/a if it changes). Without the server binaries the section
 * is skipped with a note. Every run is checked: it ended `done` with the answer, and the workers
 * made exactly 11 model and 10 tool calls for it.
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Agent, LoopResult } from '../src/index.ts';
import { createPostgresRuntime, runWorker } from '../src/postgres/index.ts';
import { startCluster, type Cluster } from '../scripts/postgresCluster.ts';
import { AGENT_ID, ANSWER, CALLS, TASK, benchAgent, checkCounts, mergeCounts, newCallCounts } from './postgresAgents.ts';
import { countersBetween, createDatabase, databaseCounters, quiesce, settle, stepLatency, withClient, type DatabaseCounters, type StepLatency } from './postgresDatabase.ts';
import { clientCpuSeconds, killWorkers, processCpuSeconds, serverCpuSeconds, startWorker, sum, type WorkerProcess } from './postgresProcesses.ts';
import { countWaiting, createWaitingRuns, type WaitingSetup } from './postgresWaiting.ts';
import type { PostgresWorkerOptions } from './postgresWorker.ts';
import { quantile, summarize, type Summary } from './stats.ts';

export interface PostgresOptions {
  /** Agents submitted at once in each throughput run. */
  readonly agents: number;
  /** Worker process counts, one throughput run each (1 is the baseline of the others). */
  readonly workers: readonly number[];
  /** Runs waiting on a human during the extra one-worker run (0: no such run). */
  readonly waiting: number;
  /** Run the one-worker batch again on a cluster with fsync on. */
  readonly fsyncOn: boolean;
  /** Sequential runs timed for the cost per iteration (each side). */
  readonly sequentialRuns: number;
  /** Jobs each worker process runs at once (default 16). */
  readonly concurrency?: number;
  readonly log?: (message: string) => void;
}

/** CPU seconds used during one throughput run, by side, and what the machine had. */
export interface CpuSplit {
  readonly workersS: number;
  /** Every server process (the postmaster and its children, those that exited included). */
  readonly postgresS: number;
  /** This process: submitting runs and waiting for their results. */
  readonly clientS: number;
  /** Wall time × the cores available. */
  readonly availableS: number;
}

export interface ThroughputResult {
  readonly workers: number;
  /** Agents submitted; all of them finished unless `stopped`. */
  readonly agents: number;
  readonly fsync: boolean;
  /** Runs waiting on a human in the database during the batch, and how long making them took. */
  readonly waiting: number;
  readonly waitingSetup?: WaitingSetup;
  /** A batch that ran past its time limit is stopped: then wallMs is a lower bound and agentsPerSecond an upper one. */
  readonly stopped?: { readonly done: number };
  readonly wallMs: number;
  readonly agentsPerSecond: number;
  readonly cpu: CpuSplit;
  /** Events applied, and how long each took to apply (NaN where the runtime no longer records it). */
  readonly steps: StepLatency;
  /** Seconds from a run's submission to its result, as the client saw it. */
  readonly runS: { readonly p50: number; readonly p99: number };
  /** Transactions and WAL from the batch's start until its connections closed. */
  readonly database: DatabaseCounters;
}

export interface PostgresResult {
  readonly serverVersion: string;
  readonly cores: number;
  /** Jobs each worker process runs at once. */
  readonly concurrency: number;
  /** The first row is the baseline: one worker, fsync off, nothing waiting. */
  readonly throughput: readonly ThroughputResult[];
  /** Sequential react-10 runs, 0 ms model: µs per iteration (run wall time / 10). */
  /** `…Us`: runs of an agent past its warm-up (`warmupRuns`); `…ColdUs`: its first runs (after two), on a worker just started. */
  readonly perIteration: {
    readonly runs: number;
    readonly warmupRuns: number;
    readonly postgresUs: Summary;
    readonly memoryUs: Summary;
    readonly postgresColdUs: Summary;
    readonly memoryColdUs: Summary;
  };
}

/** `skipped`: why the section was not measured. */
export type PostgresSection = PostgresResult | { readonly skipped: string };

const MODEL_DELAY_MS = 5;
/**
 * Every batch after the first is stopped once it has taken this many times the first one's wall
 * time (at least a minute): enough to say it misses any target here, without running for hours.
 */
const LIMIT_VS_FIRST = 3;

interface Batch {
  readonly workers: number;
  readonly agents: number;
  readonly concurrency: number;
  readonly fsync: boolean;
  /** Runs waiting on a human to make before the batch. */
  readonly waiting: number;
  readonly limitMs?: number;
}

/**
 * @example
 * ```ts
 * const section = await measurePostgres({ agents: 100, workers: [1, 2], waiting: 1000, fsyncOn: false, sequentialRuns: 5 });
 * if (!('skipped' in section)) console.log(section.throughput.map((t) => t.agentsPerSecond));
 * ```
 */
export async function measurePostgres(options: PostgresOptions): Promise<PostgresSection> {
  const clusters = new Set<Cluster>();
  const start = async (fsync: boolean): Promise<Cluster | { readonly missing: string }> => {
    const cluster = await startCluster({ fsync });
    if (!('missing' in cluster)) clusters.add(cluster);
    return cluster;
  };
  const stop = (cluster: Cluster) => {
    clusters.delete(cluster);
    cluster.stop();
  };
  const cluster = await start(false);
  if ('missing' in cluster) return { skipped: `${cluster.missing} The PostgreSQL section was skipped (Debian: apt-get install postgresql).` };
  const log = options.log ?? (() => undefined);
  const base: Batch = { workers: 1, agents: options.agents, concurrency: options.concurrency ?? 16, fsync: false, waiting: 0 };
  // A bench stopped by a signal would otherwise leave the servers and their workers running.
  const interrupted = (signal: NodeJS.Signals) => {
    killWorkers();
    for (const running of clusters) running.stop();
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    const serverVersion = await withClient(cluster.url, async (client) => (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '?');
    const throughput: ThroughputResult[] = [];
    const limited = (batch: Batch): Batch => {
      const first = throughput[0];
      return first === undefined ? batch : { ...batch, limitMs: Math.max(60_000, LIMIT_VS_FIRST * first.wallMs) };
    };
    for (const workers of options.workers) {
      log(`PostgreSQL: ${options.agents} react-10 agents (5 ms model) on ${plural(workers, 'worker process', 'worker processes')}`);
      throughput.push(await measureThroughput(cluster, `bench_throughput_${workers}`, limited({ ...base, workers }), log));
    }
    if (options.waiting > 0) {
      log(`PostgreSQL: ${options.agents} react-10 agents on one worker process, with ${options.waiting} runs waiting on a human`);
      throughput.push(await measureThroughput(cluster, 'bench_waiting', limited({ ...base, waiting: options.waiting }), log));
    }
    log(`PostgreSQL: ${options.sequentialRuns} sequential react-10 runs (0 ms model), durable vs in memory`);
    const perIteration = await measurePerIteration(await createDatabase(cluster.url, 'bench_sequential'), options.sequentialRuns);
    stop(cluster);
    if (options.fsyncOn) {
      log(`PostgreSQL: ${options.agents} react-10 agents on one worker process, on a cluster with fsync on`);
      const synced = await start(true);
      if ('missing' in synced) throw new Error(synced.missing);
      try {
        throughput.push(await measureThroughput(synced, 'bench_fsync', limited({ ...base, fsync: true }), log));
      } finally {
        stop(synced);
      }
    }
    return { serverVersion, cores: availableParallelism(), concurrency: base.concurrency, throughput, perIteration };
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    for (const running of [...clusters]) stop(running);
  }
}

async function measureThroughput(cluster: Cluster, database: string, batch: Batch, log: (message: string) => void): Promise<ThroughputResult> {
  const url = await createDatabase(cluster.url, database);
  const runtime = createPostgresRuntime({ connectionString: url });
  let open = true;
  const workers: WorkerProcess[] = [];
  try {
    await runtime.migrate();
    const agent = benchAgent(runtime, { delayMs: MODEL_DELAY_MS });
    const workerOptions: PostgresWorkerOptions = { concurrency: batch.concurrency, delayMs: MODEL_DELAY_MS };
    workers.push(...(await Promise.all(Array.from({ length: batch.workers }, () => startWorker(url, workerOptions)))));
    // A worker that dies would leave its runs waiting forever: fail the section instead.
    const died = Promise.race(workers.map((worker) => worker.died));
    died.catch(() => undefined);
    const waitingSetup = batch.waiting > 0 ? await Promise.race([createWaitingRuns(url, batch.waiting, log), died]) : undefined;
    await settle(url);
    const before = await databaseCounters(url);
    const pids = workers.map((worker) => worker.pid);
    const workersBefore = sum(pids.map(processCpuSeconds));
    const serverBefore = serverCpuSeconds(cluster.pid);
    const clientBefore = process.cpuUsage();
    const runS: number[] = [];
    const results: LoopResult[] = [];
    const started = performance.now();
    const one = async (i: number) => {
      const submitted = performance.now();
      const result = await agent.run(`${TASK} (${i})`);
      runS.push((performance.now() - submitted) / 1000);
      results.push(result);
    };
    const all = Promise.all(Array.from({ length: batch.agents }, (_, i) => one(i)));
    // Past the limit the runs left are abandoned: their rejections once the runtime closes are expected.
    all.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<'stopped'>((resolve) => (timer = batch.limitMs === undefined ? undefined : setTimeout(() => resolve('stopped'), batch.limitMs)));
    const stopped = (await Promise.race([all, died, limit])) === 'stopped';
    clearTimeout(timer);
    const wallMs = performance.now() - started;
    const cpu: CpuSplit = {
      workersS: sum(pids.map(processCpuSeconds)) - workersBefore,
      postgresS: serverCpuSeconds(cluster.pid) - serverBefore,
      clientS: clientCpuSeconds(process.cpuUsage(clientBefore)),
      availableS: (wallMs / 1000) * availableParallelism(),
    };
    if (stopped) log(`PostgreSQL: stopped the batch after ${Math.round(wallMs / 1000)} s (${LIMIT_VS_FIRST}× the first batch), ${results.length} of ${batch.agents} runs done`);
    const wrong = results.filter((result) => result.status !== 'done' || result.text !== ANSWER);
    if (wrong.length > 0) throw new Error(`PostgreSQL bench: ${wrong.length} of ${batch.agents} runs did not end done with "${ANSWER}".`);
    const counts = mergeCounts(await Promise.all(workers.splice(0).map((worker) => worker.stop())));
    open = false;
    await runtime.close();
    await quiesce(url);
    const after = await databaseCounters(url);
    // A stopped batch's calls are those of the runs in flight too: only a whole batch adds up.
    if (!stopped) checkCounts(counts, batch.agents);
    const waiting = waitingSetup?.runs ?? 0;
    if (waiting > 0) {
      const still = await countWaiting(url, waiting);
      if (still !== waiting) throw new Error(`PostgreSQL bench: ${still} runs wait on a human after the batch, not ${waiting}.`);
    }
    return {
      workers: batch.workers,
      agents: batch.agents,
      fsync: batch.fsync,
      waiting,
      ...(waitingSetup === undefined ? {} : { waitingSetup }),
      ...(stopped ? { stopped: { done: results.length } } : {}),
      wallMs,
      agentsPerSecond: batch.agents / (wallMs / 1000),
      cpu,
      steps: await stepLatency(url, AGENT_ID),
      runS: { p50: quantile(runS, 0.5), p99: quantile(runS, 0.99) },
      database: countersBetween(before, after),
    };
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
    if (open) await runtime.close();
  }
}

async function measurePerIteration(url: string, runs: number): Promise<PostgresResult['perIteration']> {
  const runtime = createPostgresRuntime({ connectionString: url, poolSize: 8 });
  let postgres: Timed;
  try {
    await runtime.migrate();
    const counts = newCallCounts();
    const agent = benchAgent(runtime, { delayMs: 0, counts });
    // In this process: one run at a time leaves the worker's and the client's work in sequence anyway.
    const worker = await runWorker({ runtime, concurrency: 4, pollIntervalMs: 500 });
    try {
      postgres = await timeRuns(agent, runs);
    } finally {
      await worker.stop();
    }
    checkCounts(counts, WARMUP_RUNS + runs);
  } finally {
    await runtime.close();
  }
  const memory = benchAgent(undefined, { delayMs: 0 });
  const inMemory = await timeRuns(memory, runs);
  memory.stop();
  return { runs, warmupRuns: WARMUP_RUNS, postgresUs: postgres.warm, memoryUs: inMemory.warm, postgresColdUs: postgres.cold, memoryColdUs: inMemory.cold };
}

/** Untimed runs before the steady state is timed: in a fresh process the first tens of runs still compile code and open connections. */
const WARMUP_RUNS = 40;
/** Untimed runs before the cold sample. */
const FIRST_RUNS = 2;

interface Timed {
  readonly cold: Summary;
  readonly warm: Summary;
}

/** µs per iteration of the agent's first `runs` sequential runs (after two), then of as many after the warm-up. */
async function timeRuns(agent: Agent, runs: number): Promise<Timed> {
  const cold: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < WARMUP_RUNS + runs; i++) {
    const started = performance.now();
    const result = await agent.run(`${TASK} (${i})`);
    const us = (performance.now() - started) * 1000;
    if (result.status !== 'done' || result.text !== ANSWER) throw new Error(`PostgreSQL bench: a sequential run ended ${result.status} with ${JSON.stringify(result.text)}.`);
    if (i >= FIRST_RUNS && i < FIRST_RUNS + runs) cold.push(us / CALLS);
    if (i >= WARMUP_RUNS) warm.push(us / CALLS);
  }
  return { cold: summarize(cold), warm: summarize(warm) };
}

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;
