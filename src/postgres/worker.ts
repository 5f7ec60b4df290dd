/**
 * graphile-worker leaves a dead worker's jobs locked for hours, so each worker keeps a heartbeat row
 * and every worker unlocks the jobs of those whose heartbeat went stale: steps are safe to run again.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { EventEmitter, setMaxListeners } from 'node:events';
import { makeWorkerUtils, run, type Runner, type Task, type WorkerEvents, type WorkerUtils } from 'graphile-worker';
import { z } from 'zod';
import { ConfigurationError } from '../core/errors.ts';
import { WAKE_TASK, type Engine } from './engine.ts';
import { quietLogger, SCHEMA } from './migrations.ts';
import { engineOf, type PostgresRuntime } from './runtime.ts';
import { drive, Runs } from './drive.ts';
import { wake as wakeRuns } from './outbox.ts';
import { isConnectionError, transaction, whileReconnecting } from './transaction.ts';

export interface WorkerOptions {
  readonly runtime: PostgresRuntime;
  /** Default 10. */
  readonly concurrency?: number;
  /** Default 5 s. */
  readonly heartbeatMs?: number;
  /** A worker whose heartbeat is older than this is dead: its jobs and calls go to others (default 30 s). */
  readonly staleAfterMs?: number;
  /** For jobs it was not told of (retries); default 2 s. */
  readonly pollIntervalMs?: number;
}

export interface DurableWorker {
  readonly id: string;
  /** Those created with its runtime in this process. */
  readonly agents: readonly string[];
  /** Finish the steps in hand, hand the calls in hand to other workers, then stop. */
  stop(): Promise<void>;
}

const WakePayload = z.object({ actor: z.string() });

/**
 * @example
 * const worker = await runWorker({ runtime, concurrency: 20 }); // after createAgent({ …, runtime })
 * process.on('SIGTERM', () => void worker.stop());
 */
export async function runWorker(options: WorkerOptions): Promise<DurableWorker> {
  const engine = engineOf(options.runtime);
  const concurrency = positive(options.concurrency, 'concurrency') ?? 10;
  // Each job holds a connection while its step's transaction runs, and graphile-worker needs a couple of its own.
  const poolSize = engine.pool.options.max ?? 10;
  if (concurrency + 2 > poolSize) {
    throw new ConfigurationError(`runWorker: concurrency ${concurrency} needs a runtime with poolSize ≥ ${concurrency + 2} (it has ${poolSize}): createPostgresRuntime({ poolSize }).`);
  }
  const heartbeatMs = positive(options.heartbeatMs, 'heartbeatMs') ?? 5_000;
  const staleAfterMs = positive(options.staleAfterMs, 'staleAfterMs') ?? 30_000;
  if (staleAfterMs <= heartbeatMs * 2) throw new ConfigurationError('runWorker: staleAfterMs must be more than twice heartbeatMs, or live workers are taken for dead.');
  await engine.ready();
  const id = `worker_${randomUUID()}`;
  await engine.pool.query(`INSERT INTO ${SCHEMA}.workers (id, host, pid) VALUES ($1, $2, $3)`, [id, hostname(), process.pid]);
  const stopping = new AbortController();

  const runs = new Runs();
  const wake: Task = async (payload, helpers) => {
    const { actor } = WakePayload.parse(payload);
    // The pool's shutdown signal is shared by every job: one listener per job in hand.
    setMaxListeners(concurrency + 10, helpers.abortSignal);
    const controller = new AbortController();
    const forward = (): void => controller.abort(helpers.abortSignal.reason);
    if (helpers.abortSignal.aborted) forward();
    else helpers.abortSignal.addEventListener('abort', forward, { once: true });
    try {
      await drive(engine, id, runs, actor, AbortSignal.any([controller.signal, stopping.signal]));
    } finally {
      helpers.abortSignal.removeEventListener('abort', forward);
    }
  };

  /** Jobs are locked in the name of the pool that fetched them: what a sweep unlocks. */
  const jobWorkers: string[] = [];
  const utils: WorkerUtils = await makeWorkerUtils({ pgPool: engine.pool, logger: quietLogger });
  /** Resolves once the latest pool listens for new jobs. */
  let listens: Promise<void> = Promise.resolve();
  const startRunner = async (): Promise<Runner> => {
    // Listened to before `run`, which creates the pool's workers before it returns.
    const events = new EventEmitter() as WorkerEvents;
    events.on('pool:create', ({ workerPool }) => void jobWorkers.push(workerPool.id));
    events.on('worker:create', ({ worker }) => void jobWorkers.push(worker.workerId));
    // `run` resolves before the pool LISTENs, its workers having looked for jobs already: a job queued between
    // would wait for the poll. Once it listens (again, after a lost connection) the pool looks once more.
    let listening: () => void = () => undefined;
    listens = new Promise<void>((resolve) => (listening = resolve));
    events.on('pool:listen:success', ({ workerPool, client }) => {
      // Emitted just before graphile-worker sends its LISTEN on `client`: a query sent after it is answered after it.
      queueMicrotask(() => {
        void client.query('SELECT 1').then(() => {
          workerPool.nudge(concurrency);
          listening();
        }, () => undefined);
      });
    });
    const runner = await run({
      events,
      pgPool: engine.pool,
      concurrency,
      noHandleSignals: true,
      pollInterval: options.pollIntervalMs ?? 2_000,
      logger: quietLogger,
      taskList: { [WAKE_TASK]: wake },
    });
    // graphile-worker gives up on a pool when the database drops it mid-way (it cannot release a job): start another.
    runner.promise.catch((error: unknown) => {
      if (stopping.signal.aborted) return;
      console.warn(`[actorloop worker] the job runner stopped (${error instanceof Error ? error.message : String(error)}); starting another.`);
      void replaceRunner();
    });
    return runner;
  };
  const replaceRunner = async (): Promise<void> => {
    const abandoned = jobWorkers.splice(0);
    await whileReconnecting(() => utils.forceUnlockWorkers(abandoned), { patienceMs: Number.POSITIVE_INFINITY, signal: stopping.signal }).catch(() => undefined);
    if (stopping.signal.aborted) return;
    runner = await whileReconnecting(startRunner, { patienceMs: Number.POSITIVE_INFINITY, signal: stopping.signal });
  };
  let runner: Runner = await startRunner();
  // Only the first start is waited for: a replacement that cannot listen yet must not keep `stop` from the runner in hand.
  await Promise.race([listens, runner.promise.catch(() => undefined)]);

  const beat = async (): Promise<void> => {
    // A worker swept as dead while it was only slow (or the database was away) signs in again.
    await engine.pool.query(
      `INSERT INTO ${SCHEMA}.workers (id, host, pid, job_workers) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), job_workers = EXCLUDED.job_workers`,
      [id, hostname(), process.pid, jobWorkers],
    );
  };
  const sweep = async (): Promise<void> => {
    const stale = await engine.pool.query<{ id: string; job_workers: string[] }>(
      `DELETE FROM ${SCHEMA}.workers WHERE heartbeat_at < now() - make_interval(secs => $1::double precision / 1000) AND id <> $2 RETURNING id, job_workers`,
      [staleAfterMs, id],
    );
    const ids = stale.rows.flatMap((row) => row.job_workers);
    if (ids.length > 0) await utils.forceUnlockWorkers(ids);
  };
  await beat();
  const timer = setInterval(() => {
    beat()
      .then(sweep)
      .catch((error: unknown) => {
        if (!isConnectionError(error)) console.warn(`[actorloop worker] heartbeat failed: ${error instanceof Error ? error.message : String(error)}`);
      });
  }, heartbeatMs);
  timer.unref();
  let stopped: Promise<void> | undefined;
  return {
    id,
    agents: [...engine.agents.keys(), ...engine.strategies.keys()],
    stop: () =>
      (stopped ??= (async () => {
        clearInterval(timer);
        stopping.abort(new Error('the worker is stopping'));
        await runner.stop().catch(() => undefined);
        await utils.release();
        // Calls this worker claimed and did not finish go to whoever wakes their runs next: wake them now.
        await transaction(engine.pool, async (client) => {
          const released = await client.query<{ actor_id: string }>(
            `UPDATE ${SCHEMA}.effects SET claimed_by = NULL WHERE claimed_by = $1 AND status <> 'done' RETURNING actor_id`,
            [id],
          );
          await wakeRuns(client, released.rows.map((row) => row.actor_id));
        }).catch(() => undefined);
        await engine.pool.query(`DELETE FROM ${SCHEMA}.workers WHERE id = $1`, [id]).catch(() => undefined);
      })()),
  };
}

function positive(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value <= 0) throw new ConfigurationError(`runWorker: ${name} must be a positive number (got ${String(value)}).`);
  return value;
}

export type { Engine };
