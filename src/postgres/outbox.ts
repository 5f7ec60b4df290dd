/** A wake job only says "look at this run": its job key keeps at most one waiting per run. */
import type pg from 'pg';
import { WAKE_TASK } from './engine.ts';
import { DurableRunError } from './errors.ts';
import { SCHEMA } from './migrations.ts';
import type { EffectOutcome, EffectRequest } from './durable.ts';
import { defined } from '../core/defined.ts';
import { jsonbText, storableText } from './jsonb.ts';
import { storeBlobs, type Blobs } from './blobs.ts';
import { transaction } from './transaction.ts';

type Db = pg.Pool | pg.PoolClient;

const FINAL = `('done', 'failed', 'cancelled')`;

export type MailboxEvent =
  | { readonly decision: { readonly approve: boolean; readonly toolCallIds?: readonly string[]; readonly reason?: string } }
  | { readonly cancel: string };

/** Each failed attempt means a worker took the run's waiting wake at that very moment. */
const WAKE_ATTEMPTS = 20;

/**
 * `add_job` queues nothing when a worker takes the waiting wake between its two statements, and that
 * step may have read the run before this commits: `add_job` is called again, queueing a new wake.
 */
export async function wake(db: Db, actorIds: readonly string[]): Promise<void> {
  let left = [...new Set(actorIds)];
  for (let attempt = 1; left.length > 0; attempt++) {
    if (attempt > WAKE_ATTEMPTS) {
      throw new DurableRunError(`Run ${left[0] ?? ''} could not be woken: workers took its waiting wake ${WAKE_ATTEMPTS} times in a row while a new one was being queued. Try again (a worker's step is retried by its queue).`, {
        ...defined({ runId: left[0] }),
      });
    }
    const queued = await db.query<{ actor: string; job: string | null }>(
      `SELECT ids.id AS actor, job.id AS job FROM unnest($2::text[]) AS ids(id), LATERAL graphile_worker.add_job($1, json_build_object('actor', ids.id), job_key := 'wake:' || ids.id) AS job`,
      [WAKE_TASK, left],
    );
    left = queued.rows.flatMap((row) => (row.job === null ? [row.actor] : []));
  }
}

export interface QueuedRun {
  readonly id: string;
  readonly kind: 'agent' | 'strategy';
  readonly agentId: string;
  readonly task: string;
  /** Its options as jsonb text. */
  readonly options: string;
}

/**
 * A new run's row and its wake commit together: in one statement (one round trip) when it has no
 * media to store with it. False when a run of that id exists (nothing is written).
 */
export async function queueRun(pool: pg.Pool, run: QueuedRun, media: { readonly refs: readonly string[]; readonly blobs: Blobs }): Promise<boolean> {
  if (media.refs.length > 0) {
    return transaction(pool, async (client) => {
      const added = await client.query(
        `INSERT INTO ${SCHEMA}.actors (id, kind, agent_id, status, task, options, blobs) VALUES ($1, $2, $3, 'queued', $4, $5, $6) ON CONFLICT DO NOTHING RETURNING 1`,
        [run.id, run.kind, run.agentId, run.task, run.options, media.refs],
      );
      if (added.rowCount !== 1) return false;
      await storeBlobs(client, run.id, media.refs, media.blobs);
      await wake(client, [run.id]);
      return true;
    });
  }
  const queued = await pool.query<{ job: string | null }>({
    name: 'actorloop_queue_run',
    text: `WITH inserted AS (
             INSERT INTO ${SCHEMA}.actors (id, kind, agent_id, status, task, options, blobs) VALUES ($1, $2, $3, 'queued', $4, $5, '{}') ON CONFLICT DO NOTHING RETURNING id
           )
           SELECT job.id AS job FROM inserted, LATERAL graphile_worker.add_job($6, json_build_object('actor', inserted.id), job_key := 'wake:' || inserted.id) AS job`,
    values: [run.id, run.kind, run.agentId, run.task, run.options, WAKE_TASK],
  });
  const row = queued.rows[0];
  if (row === undefined) return false;
  // Only a wake of an earlier run of that id being taken at that moment leaves none queued: queue one as a step would.
  if (row.job === null) await wake(pool, [run.id]);
  return true;
}

/** Once, and wakes the run waiting for it unless it ended. */
export async function settleEffect(db: Db, actorId: string, key: string, outcome: EffectOutcome): Promise<void> {
  const settled = await db.query(
    `WITH done AS (
       UPDATE ${SCHEMA}.effects SET status = 'done', outcome = $3, finished_at = now() WHERE actor_id = $1 AND key = $2 AND status <> 'done' RETURNING 1
     )
     SELECT 1 FROM done, ${SCHEMA}.actors AS actors WHERE actors.id = $1 AND actors.status NOT IN ${FINAL}`,
    [actorId, key, jsonbText(outcome)],
  );
  if ((settled.rowCount ?? 0) > 0) await wake(db, [actorId]);
}

export async function startChildren(db: Db, parentId: string, requests: readonly EffectRequest[]): Promise<void> {
  const kids = requests.flatMap((request) => (request.kind === 'child' ? [request] : []));
  if (kids.length === 0) return;
  await db.query(
    `INSERT INTO ${SCHEMA}.effects (actor_id, key, kind, status, request)
     SELECT $1, 'child:' || id, 'child', 'pending', request FROM unnest($2::text[], $3::jsonb[]) AS t(id, request)
     ON CONFLICT DO NOTHING`,
    [parentId, kids.map((kid) => kid.runId), kids.map((kid) => jsonbText(kid))],
  );
  const made = await db.query<{ id: string }>(
    `INSERT INTO ${SCHEMA}.actors (id, kind, agent_id, parent_id, status, task)
     SELECT id, 'agent', agent, $1, 'queued', task FROM unnest($2::text[], $3::text[], $4::text[]) AS t(id, agent, task)
     ON CONFLICT DO NOTHING RETURNING id`,
    [parentId, kids.map((kid) => kid.runId), kids.map((kid) => kid.agentId), kids.map((kid) => storableText(kid.task))],
  );
  await wake(db, made.rows.map((row) => row.id));
}

/** How many runs got it. */
export async function post(db: Db, actorIds: readonly string[], event: MailboxEvent, where = `status NOT IN ${FINAL}`): Promise<number> {
  if (actorIds.length === 0) return 0;
  const posted = await db.query<{ actor_id: string }>(
    `INSERT INTO ${SCHEMA}.mailbox (actor_id, event) SELECT id, $2 FROM ${SCHEMA}.actors WHERE id = ANY($1::text[]) AND ${where} RETURNING actor_id`,
    [actorIds, jsonbText(event)],
  );
  await wake(db, posted.rows.map((row) => row.actor_id));
  return posted.rowCount ?? 0;
}

/** `what`: what became of the parent, as the children's cancel reason says it. */
export async function cancelChildren(db: Db, parentId: string, what: string): Promise<void> {
  const children = await db.query<{ id: string }>(`SELECT id FROM ${SCHEMA}.actors WHERE parent_id = $1 AND status NOT IN ${FINAL}`, [parentId]);
  await post(db, children.rows.map((row) => row.id), { cancel: `its parent ${parentId} ${what}` });
}

/** A wake at `at` (epoch ms), apart from the run's waiting one: its own key, so neither replaces the other. */
export async function wakeAt(db: Db, actorId: string, at: number): Promise<void> {
  await db.query(`SELECT graphile_worker.add_job($1, json_build_object('actor', $2::text), run_at := $3, job_key := 'deadline:' || $2)`, [WAKE_TASK, actorId, new Date(at)]);
}
