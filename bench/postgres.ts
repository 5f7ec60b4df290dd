/**
 * Scenario: the durable runtime on PostgreSQL (src/postgres). On a throwaway cluster
 * (scripts/postgresCluster.ts), three figures:
 *
 * - throughput: N react-10 agents with a 5 ms model, submitted at once by this process (the
 *   client), run by one worker process, then on a fresh database by two; with the CPU each side
 *   used, to name the bottleneck (workers, the server, or the client);
 * - step latency: how long applying one event to a run takes (actorloop.inbox);
 * - cost per iteration: sequential react-10 runs with a 0 ms model through the runtime (an
 *   in-process worker) vs the same agent in memory.
 *
 * Without the server binaries the section is skipped with a note. Every run is checked: it
 * ended `done` with the answer, after exactly 11 model and 10 tool calls.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Agent } from '../src/index.ts';
import { createPostgresRuntime, runWorker } from '../src/postgres/index.ts';
import { startCluster } from '../scripts/postgresCluster.ts';
import { ANSWER, CALLS, TASK, benchAgent } from './postgresAgents.ts';
import type { PostgresWorkerOptions } from './postgresWorker.ts';
import { summarize, type Summary } from './stats.ts';

export interface PostgresOptions {
  /** Agents submitted at once in each throughput run. */
  readonly agents: number;
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
  readonly agents: number;
  readonly wallMs: number;
  readonly agentsPerSecond: number;
  readonly cpu: CpuSplit;
  /** Events applied (rows of actorloop.inbox), and how long each took to apply. */
  readonly steps: { readonly count: number; readonly p50Ms: number; readonly p99Ms: number };
}

export interface PostgresResult {
  readonly serverVersion: string;
  readonly cores: number;
  /** Jobs each worker process runs at once. */
  readonly concurrency: number;
  readonly throughput: readonly ThroughputResult[];
  /** Sequential react-10 runs, 0 ms model: µs per iteration (run wall time / 10). */
  readonly perIteration: { readonly runs: number; readonly postgresUs: Summary; readonly memoryUs: Summary };
}

/** `skipped`: why the section was not measured. */
export type PostgresSection = PostgresResult | { readonly skipped: string };

/** Worker processes running now (killed if the bench is interrupted). */
const live = new Set<ChildProcess>();
const WORKER = fileURLToPath(new URL('./postgresWorker.ts', import.meta.url));
const MODEL_DELAY_MS = 5;

/**
 * @example
 * ```ts
 * const section = await measurePostgres({ agents: 100, sequentialRuns: 5 });
 * if (!('skipped' in section)) console.log(section.throughput.map((t) => t.agentsPerSecond));
 * ```
 */
export async function measurePostgres(options: PostgresOptions): Promise<PostgresSection> {
  const cluster = await startCluster();
  if ('missing' in cluster) return { skipped: `${cluster.missing} The PostgreSQL section was skipped (Debian: apt-get install postgresql).` };
  const log = options.log ?? (() => undefined);
  const concurrency = options.concurrency ?? 16;
  // A bench stopped by a signal would otherwise leave the server and its workers running.
  const interrupted = (signal: NodeJS.Signals) => {
    for (const child of live) child.kill('SIGKILL');
    cluster.stop();
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    const serverVersion = await withClient(cluster.url, async (client) => (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '?');
    const throughput: ThroughputResult[] = [];
    for (const workers of [1, 2]) {
      log(`PostgreSQL: ${options.agents} react-10 agents (5 ms model) on ${workers} worker process${workers === 1 ? '' : 'es'}`);
      const url = await createDatabase(cluster.url, `bench_throughput_${workers}`);
      throughput.push(await measureThroughput(url, cluster.pid, { workers, agents: options.agents, concurrency }));
    }
    log(`PostgreSQL: ${options.sequentialRuns} sequential react-10 runs (0 ms model), durable vs in memory`);
    const perIteration = await measurePerIteration(await createDatabase(cluster.url, 'bench_sequential'), options.sequentialRuns);
    return { serverVersion, cores: availableParallelism(), concurrency, throughput, perIteration };
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    cluster.stop();
  }
}

async function measureThroughput(url: string, postmaster: number, setup: { workers: number; agents: number; concurrency: number }): Promise<ThroughputResult> {
  const runtime = createPostgresRuntime({ connectionString: url });
  const children: ChildProcess[] = [];
  try {
    await runtime.migrate();
    const agent = benchAgent(runtime, { delayMs: MODEL_DELAY_MS });
    const workerOptions: PostgresWorkerOptions = { concurrency: setup.concurrency, delayMs: MODEL_DELAY_MS };
    children.push(...(await Promise.all(Array.from({ length: setup.workers }, () => startWorker(url, workerOptions)))));
    // A worker that dies would leave its runs waiting forever: fail the section instead.
    const died = new Promise<never>((_, reject) => {
      for (const child of children) child.once('exit', (code) => reject(new Error(`A PostgreSQL bench worker exited (${String(code)}) during the run.`)));
    });
    died.catch(() => undefined);
    const pids = children.map((child) => child.pid ?? 0);
    const workersBefore = sum(pids.map(processCpuSeconds));
    const serverBefore = serverCpuSeconds(postmaster);
    const clientBefore = process.cpuUsage();
    const started = performance.now();
    const results = await Promise.race([Promise.all(Array.from({ length: setup.agents }, (_, i) => agent.run(`${TASK} (${i})`))), died]);
    const wallMs = performance.now() - started;
    const cpu: CpuSplit = {
      workersS: sum(pids.map(processCpuSeconds)) - workersBefore,
      postgresS: serverCpuSeconds(postmaster) - serverBefore,
      clientS: clientCpuSeconds(process.cpuUsage(clientBefore)),
      availableS: (wallMs / 1000) * availableParallelism(),
    };
    const wrong = results.filter((result) => result.status !== 'done' || result.text !== ANSWER);
    if (wrong.length > 0) throw new Error(`PostgreSQL bench: ${wrong.length} of ${setup.agents} runs did not end done with "${ANSWER}".`);
    await verifyRuns(url, setup.agents);
    const steps = await stepLatency(url);
    return { workers: setup.workers, agents: setup.agents, wallMs, agentsPerSecond: setup.agents / (wallMs / 1000), cpu, steps };
  } finally {
    await Promise.all(children.map(stopWorker));
    await runtime.close();
  }
}

async function measurePerIteration(url: string, runs: number): Promise<PostgresResult['perIteration']> {
  const runtime = createPostgresRuntime({ connectionString: url, poolSize: 8 });
  let postgresUs: Summary;
  try {
    await runtime.migrate();
    const agent = benchAgent(runtime, { delayMs: 0 });
    // In this process: one run at a time leaves the worker's and the client's work in sequence anyway.
    const worker = await runWorker({ runtime, concurrency: 4, pollIntervalMs: 500 });
    try {
      postgresUs = await timeRuns(agent, runs);
    } finally {
      await worker.stop();
    }
    await verifyRuns(url, runs + WARMUP_RUNS);
  } finally {
    await runtime.close();
  }
  const memory = benchAgent(undefined, { delayMs: 0 });
  const memoryUs = await timeRuns(memory, runs);
  memory.stop();
  return { runs, postgresUs, memoryUs };
}

const WARMUP_RUNS = 2;

/** µs per iteration of each of `runs` sequential runs, after a few untimed ones. */
async function timeRuns(agent: Agent, runs: number): Promise<Summary> {
  const samples: number[] = [];
  for (let i = 0; i < WARMUP_RUNS + runs; i++) {
    const started = performance.now();
    const result = await agent.run(`${TASK} (${i})`);
    const us = (performance.now() - started) * 1000;
    if (result.status !== 'done' || result.text !== ANSWER) throw new Error(`PostgreSQL bench: a sequential run ended ${result.status} with ${JSON.stringify(result.text)}.`);
    if (i >= WARMUP_RUNS) samples.push(us / CALLS);
  }
  return summarize(samples);
}

/** Every run ended done, each after exactly CALLS + 1 model and CALLS tool calls, each made. */
async function verifyRuns(url: string, runs: number): Promise<void> {
  const found = await withClient(url, (client) =>
    client.query<{ runs: number; done: number; right: number; unfinished: number }>(
      `SELECT (SELECT count(*)::int FROM actorloop.actors) AS runs,
              (SELECT count(*)::int FROM actorloop.actors WHERE status = 'done') AS done,
              (SELECT count(*)::int FROM (
                 SELECT actor_id FROM actorloop.effects GROUP BY actor_id
                 HAVING count(*) FILTER (WHERE kind = 'model') = $1 AND count(*) FILTER (WHERE kind = 'tool') = $2 AND count(*) = $1 + $2
               ) AS t) AS right,
              (SELECT count(*)::int FROM actorloop.effects WHERE status <> 'done') AS unfinished`,
      [CALLS + 1, CALLS],
    ),
  );
  const row = found.rows[0];
  if (row === undefined || row.runs !== runs || row.done !== runs || row.right !== runs || row.unfinished !== 0) {
    throw new Error(`PostgreSQL bench: expected ${runs} runs done with ${CALLS + 1} model and ${CALLS} tool effects each; found ${JSON.stringify(row)}.`);
  }
}

async function stepLatency(url: string): Promise<ThroughputResult['steps']> {
  const found = await withClient(url, (client) =>
    client.query<{ count: number; p50: number | null; p99: number | null }>(
      `SELECT count(*)::int AS count,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
              percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99
       FROM (SELECT extract(epoch FROM applied_at - started_at)::float8 * 1000 AS ms FROM actorloop.inbox) AS steps`,
    ),
  );
  const row = found.rows[0];
  return { count: row?.count ?? 0, p50Ms: row?.p50 ?? NaN, p99Ms: row?.p99 ?? NaN };
}

/** Start a worker process; resolves once it takes jobs. */
function startWorker(url: string, options: PostgresWorkerOptions): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...process.execArgv, WORKER, url, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit'] });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return new Promise((resolve, reject) => {
    let out = '';
    const exited = (code: number | null) => reject(new Error(`A PostgreSQL bench worker exited (${String(code)}) before it was ready.`));
    child.once('exit', exited);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('ready')) {
        child.off('exit', exited);
        resolve(child);
      }
    });
  });
}

function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function createDatabase(base: string, name: string): Promise<string> {
  await withClient(base, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

const sum = (values: readonly number[]): number => values.reduce((total, value) => total + value, 0);

/** Clock ticks per second of /proc's CPU times (100 on nearly every Linux). */
const TICKS = ((): number => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface ProcStat {
  readonly comm: string;
  readonly ppid: number;
  /** utime + stime, and cutime + cstime (children it reaped), in ticks. */
  readonly own: number;
  readonly reaped: number;
}

/** One process's /proc/<pid>/stat, or undefined (gone, or no /proc on this system). */
function procStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // comm may hold spaces and parentheses: the fields go on after its last ")".
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  const at = (field: number) => Number(fields[field - 3]);
  return { comm: text.slice(text.indexOf('(') + 1, close), ppid: at(4), own: at(14) + at(15), reaped: at(16) + at(17) };
}

/** CPU seconds a process used so far (NaN without /proc). */
function processCpuSeconds(pid: number): number {
  const stat = procStat(pid);
  return stat === undefined ? NaN : stat.own / TICKS;
}

/**
 * CPU seconds the cluster's `postgres` processes used so far: the postmaster and its children,
 * plus the children it already reaped (backends whose connection closed), so none is lost.
 */
function serverCpuSeconds(postmaster: number): number {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return NaN;
  }
  let ticks = 0;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const stat = procStat(pid);
    if (stat === undefined || stat.comm !== 'postgres') continue;
    if (pid === postmaster) ticks += stat.own + stat.reaped;
    else if (stat.ppid === postmaster) ticks += stat.own;
  }
  return ticks / TICKS;
}

const clientCpuSeconds = (usage: NodeJS.CpuUsage): number => (usage.user + usage.system) / 1e6;
