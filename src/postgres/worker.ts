/**
 * `runWorker`: a process's share of the work of a durable runtime. It runs graphile-worker over
 * the runtime's database with two tasks — apply an event to a run (serially per run: each run's
 * events share the queue `actor:<runId>`), and make a model or tool call — for the agents this
 * process created with the runtime.
 *
 * graphile-worker leaves the jobs of a worker that died locked for hours; so each worker keeps a
 * heartbeat row, and every worker unlocks the jobs of those whose heartbeat went stale, which
 * other workers then take (their steps and calls are safe to run again).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { EventEmitter, setMaxListeners } from 'node:events';
import { makeWorkerUtils, run, type Runner, type Task, type WorkerEvents, type WorkerUtils } from 'graphile-worker';
import { z } from 'zod';
import { ConfigurationError } from '../core/errors.ts';
import { runEffect } from './effects.ts';
import { EFFECT_TASK, STEP_TASK, type Engine } from './engine.ts';
import { quietLogger, SCHEMA } from './migrations.ts';
import { engineOf, type PostgresRuntime } from './runtime.ts';
import { applyStep, failRun } from './step.ts';
import { CorruptRowError } from './errors.ts';

export interface WorkerOptions {
  readonly runtime: PostgresRuntime;
  /** Jobs run at once in this process (default 10): steps of different runs, and calls. */
  readonly concurrency?: number;
  /** How often the heartbeat is written, in ms (default 5 s). */
  readonly heartbeatMs?: number;
  /** A worker whose heartbeat is older than this, in ms, is dead: its jobs are unlocked for others (default 30 s). */
  readonly staleAfterMs?: number;
  /** How often graphile-worker polls for jobs it was not told of (retries), in ms (default 2 s). */
  readonly pollIntervalMs?: number;
  /** How often the empty queues of finished runs are removed, in ms (default 60 s). */
  readonly cleanupEveryMs?: number;
}

export interface DurableWorker {
  readonly id: string;
  /** The agents and strategies it serves: those created with its runtime in this process. */
  readonly agents: readonly string[];
  /** Finish the jobs in hand, then stop. */
  stop(): Promise<void>;
}

const StepPayload = z.object({
  actor: z.string(),
  event: z.object({
    id: z.string(),
    decision: z.object({ approve: z.boolean(), toolCallIds: z.array(z.string()).optional(), reason: z.string().optional() }).optional(),
    cancel: z.string().optional(),
  }),
});
const EffectPayload = z.object({ actor: z.string(), key: z.string() });

/**
 * @example
 * ```ts
 * const runtime = createPostgresRuntime({ connectionString });
 * createAgent({ id: 'researcher', model, tools, runtime }); // the same agents as the callers
 * const worker = await runWorker({ runtime, concurrency: 20 });
 * process.on('SIGTERM', () => void worker.stop());
 * ```
 */
export async function runWorker(options: WorkerOptions): Promise<DurableWorker> {
  const engine = engineOf(options.runtime);
  const concurrency = positive(options.concurrency, 'concurrency') ?? 10;
  // Each job holds a connection while it runs, and graphile-worker needs a couple of its own.
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

  const step: Task = async (payload) => {
    const { actor, event } = StepPayload.parse(payload);
    try {
      await applyStep(engine, id, actor, event);
    } catch (error) {
      // Retrying cannot mend a corrupt row: the run fails, naming it.
      if (!(error instanceof CorruptRowError)) throw error;
      await failRun(engine, actor, error);
    }
  };
  const effect: Task = async (payload, helpers) => {
    const { actor, key } = EffectPayload.parse(payload);
    // The pool's shutdown signal is shared by every job: one listener per job in hand, and each
    // call gets a signal of its own for whatever the model or tool hangs on it.
    setMaxListeners(concurrency + 10, helpers.abortSignal);
    const controller = new AbortController();
    const forward = (): void => controller.abort(helpers.abortSignal.reason);
    if (helpers.abortSignal.aborted) forward();
    else helpers.abortSignal.addEventListener('abort', forward, { once: true });
    try {
      await runEffect(engine, actor, key, controller.signal);
    } finally {
      helpers.abortSignal.removeEventListener('abort', forward);
    }
  };
  const queueWorkers: string[] = [];
  // Listened to before `run`, which creates the pool's workers before it returns.
  const events = new EventEmitter() as WorkerEvents;
  // Jobs are locked in the name of the pool that fetched them (and queues in the name of its workers).
  events.on('pool:create', ({ workerPool }) => void queueWorkers.push(workerPool.id));
  events.on('worker:create', ({ worker }) => void queueWorkers.push(worker.workerId));
  const runner: Runner = await run({
    events,
    pgPool: engine.pool,
    concurrency,
    noHandleSignals: true,
    pollInterval: options.pollIntervalMs ?? 2_000,
    logger: quietLogger,
    taskList: { [STEP_TASK]: step, [EFFECT_TASK]: effect },
  });
  const utils: WorkerUtils = await makeWorkerUtils({ pgPool: engine.pool, logger: quietLogger });

  const beat = async (): Promise<void> => {
    await engine.pool.query(`UPDATE ${SCHEMA}.workers SET heartbeat_at = now(), queue_workers = $2 WHERE id = $1`, [id, queueWorkers]);
  };
  const sweep = async (): Promise<void> => {
    const stale = await engine.pool.query<{ id: string; queue_workers: string[] }>(
      `DELETE FROM ${SCHEMA}.workers WHERE heartbeat_at < now() - make_interval(secs => $1::double precision / 1000) AND id <> $2 RETURNING id, queue_workers`,
      [staleAfterMs, id],
    );
    const ids = stale.rows.flatMap((row) => row.queue_workers);
    if (ids.length > 0) await utils.forceUnlockWorkers(ids);
  };
  // One queue per run: graphile-worker keeps a row per queue until it is collected.
  const cleanupEveryMs = positive(options.cleanupEveryMs, 'cleanupEveryMs') ?? 60_000;
  const collector = setInterval(() => {
    collectQueues(engine, cleanupEveryMs).catch((error: unknown) => console.warn(`[actorloop worker] queue cleanup failed: ${error instanceof Error ? error.message : String(error)}`));
  }, cleanupEveryMs);
  collector.unref();
  await beat();
  const timer = setInterval(() => {
    beat()
      .then(sweep)
      .catch((error: unknown) => console.warn(`[actorloop worker] heartbeat failed: ${error instanceof Error ? error.message : String(error)}`));
  }, heartbeatMs);
  timer.unref();
  let stopping: Promise<void> | undefined;
  return {
    id,
    agents: [...engine.agents.keys(), ...engine.strategies.keys()],
    stop: () =>
      (stopping ??= (async () => {
        clearInterval(timer);
        clearInterval(collector);
        await runner.stop();
        await utils.release();
        await engine.pool.query(`DELETE FROM ${SCHEMA}.workers WHERE id = $1`, [id]).catch(() => undefined);
      })()),
  };
}

/**
 * Remove the queues of runs that ended at least `afterMs` ago and hold no job. Not
 * graphile-worker's own collector: it removes any empty queue, also one a transaction still open
 * is adding a job to, and that job then never runs. A run that ended gets no more jobs (its
 * calls' late results are not queued), so its queue can go once the transactions of its last
 * moments are over.
 */
export async function collectQueues(engine: Engine, afterMs: number): Promise<void> {
  await engine.pool.query(
    `DELETE FROM graphile_worker._private_job_queues AS queues USING ${SCHEMA}.actors AS actors
     WHERE queues.queue_name = 'actor:' || actors.id AND actors.status IN ('done', 'failed', 'cancelled')
       AND actors.updated_at < now() - make_interval(secs => $1::double precision / 1000) AND queues.locked_at IS NULL
       AND NOT EXISTS (SELECT 1 FROM graphile_worker._private_jobs AS jobs WHERE jobs.job_queue_id = queues.id)`,
    [afterMs],
  );
}

function positive(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value <= 0) throw new ConfigurationError(`runWorker: ${name} must be a positive number (got ${String(value)}).`);
  return value;
}

export type { Engine };
