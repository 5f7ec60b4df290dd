/** The writes a step or a call makes to wake other actors, inside the caller's transaction. */
import type pg from 'pg';
import { EFFECT_TASK, STEP_TASK, queueOf } from './engine.ts';
import { SCHEMA } from './migrations.ts';
import type { EffectOutcome, EffectRequest } from './durable.ts';

type Db = pg.Pool | pg.PoolClient;

/** Record an outcome once and queue the event that wakes the run waiting for it (unless it ended: it needs no more events). */
export async function settleEffect(db: Db, actorId: string, key: string, outcome: EffectOutcome): Promise<void> {
  await db.query(
    `WITH done AS (
       UPDATE ${SCHEMA}.effects SET status = 'done', outcome = $3, finished_at = now() WHERE actor_id = $1 AND key = $2 AND status <> 'done' RETURNING 1
     )
     SELECT graphile_worker.add_job($4, json_build_object('actor', $1::text, 'event', json_build_object('id', $2::text)), queue_name := $5)
     FROM done, ${SCHEMA}.actors AS actors WHERE actors.id = $1 AND actors.status NOT IN ('done', 'failed', 'cancelled')`,
    [actorId, key, JSON.stringify(outcome), STEP_TASK, queueOf(actorId)],
  );
}

/** Queue a run's first event (its row is written by the caller). */
export async function queueStart(db: Db, actorIds: readonly string[]): Promise<void> {
  if (actorIds.length === 0) return;
  await db.query(
    `SELECT graphile_worker.add_job($1, json_build_object('actor', id, 'event', json_build_object('id', 'start')), queue_name := 'actor:' || id) FROM unnest($2::text[]) AS id`,
    [STEP_TASK, actorIds],
  );
}

/**
 * Record the calls a step asked for, once each, and queue them: a model or tool call as a job
 * of its own, a sub-agent run as a durable run (its row and its first event).
 */
export async function requestEffects(db: Db, actorId: string, requests: ReadonlyMap<string, EffectRequest>): Promise<void> {
  if (requests.size === 0) return;
  const keys = [...requests.keys()];
  const added = await db.query<{ key: string }>(
    `INSERT INTO ${SCHEMA}.effects (actor_id, key, kind, status, request)
     SELECT $1, key, request->>'kind', 'pending', request FROM unnest($2::text[], $3::jsonb[]) AS t(key, request)
     ON CONFLICT DO NOTHING RETURNING key`,
    [actorId, keys, keys.map((key) => JSON.stringify(requests.get(key)))],
  );
  const calls: string[] = [];
  const children: EffectRequest[] = [];
  for (const { key } of added.rows) {
    const request = requests.get(key);
    if (request?.kind === 'child') children.push(request);
    else calls.push(key);
  }
  if (calls.length > 0) {
    await db.query(`SELECT graphile_worker.add_job($1, json_build_object('actor', $2::text, 'key', key)) FROM unnest($3::text[]) AS key`, [EFFECT_TASK, actorId, calls]);
  }
  const kids = children.flatMap((child) => (child.kind === 'child' ? [child] : []));
  if (kids.length === 0) return;
  const made = await db.query<{ id: string }>(
    `INSERT INTO ${SCHEMA}.actors (id, kind, agent_id, parent_id, status, task)
     SELECT id, 'agent', agent, $1, 'queued', task FROM unnest($2::text[], $3::text[], $4::text[]) AS t(id, agent, task)
     ON CONFLICT DO NOTHING RETURNING id`,
    [actorId, kids.map((kid) => kid.runId), kids.map((kid) => kid.agentId), kids.map((kid) => kid.task)],
  );
  await queueStart(db, made.rows.map((row) => row.id));
}

/** Queue a cancellation for a run (as a step event: it applies once the run is replayed). */
export async function queueCancel(db: Db, actorIds: readonly string[], reason: string): Promise<number> {
  if (actorIds.length === 0) return 0;
  const queued = await db.query(
    `SELECT graphile_worker.add_job($1, json_build_object('actor', id, 'event', json_build_object('id', 'cancel:' || gen_random_uuid(), 'cancel', $2::text)), queue_name := 'actor:' || id)
     FROM ${SCHEMA}.actors WHERE id = ANY($3::text[]) AND status NOT IN ('done', 'failed', 'cancelled')`,
    [STEP_TASK, reason, actorIds],
  );
  return queued.rowCount ?? 0;
}

/** Cancel the runs a cancelled run was waiting for. */
export async function cancelChildren(db: Db, parentId: string): Promise<void> {
  const children = await db.query<{ id: string }>(`SELECT id FROM ${SCHEMA}.actors WHERE parent_id = $1 AND status NOT IN ('done', 'failed', 'cancelled')`, [parentId]);
  await queueCancel(db, children.rows.map((row) => row.id), `its parent ${parentId} was cancelled`);
}
