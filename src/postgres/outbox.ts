/**
 * The writes that wake runs, inside the caller's transaction. A run's mailbox is a table; a wake
 * job only says "look at this run": its job key keeps at most one waiting per run, however many
 * events arrive, and no job fetch ever looks at the runs that are not waiting for one.
 */
import type pg from 'pg';
import { WAKE_TASK } from './engine.ts';
import { SCHEMA } from './migrations.ts';
import type { EffectOutcome, EffectRequest } from './durable.ts';

type Db = pg.Pool | pg.PoolClient;

const FINAL = `('done', 'failed', 'cancelled')`;

/** An event for a run's mailbox: a human's decision or a cancellation. */
export type MailboxEvent =
  | { readonly decision: { readonly approve: boolean; readonly toolCallIds?: readonly string[]; readonly reason?: string } }
  | { readonly cancel: string };

/** Queue a wake for each run (coalesced with a wake already waiting). */
export async function wake(db: Db, actorIds: readonly string[]): Promise<void> {
  if (actorIds.length === 0) return;
  await db.query(`SELECT graphile_worker.add_job($1, json_build_object('actor', id), job_key := 'wake:' || id) FROM unnest($2::text[]) AS id`, [WAKE_TASK, actorIds]);
}

/** Record an outcome made elsewhere (a sub-agent run that ended) once, and wake the run waiting for it unless it ended. */
export async function settleEffect(db: Db, actorId: string, key: string, outcome: EffectOutcome): Promise<void> {
  await db.query(
    `WITH done AS (
       UPDATE ${SCHEMA}.effects SET status = 'done', outcome = $3, finished_at = now() WHERE actor_id = $1 AND key = $2 AND status <> 'done' RETURNING 1
     )
     SELECT graphile_worker.add_job($4, json_build_object('actor', $1::text), job_key := 'wake:' || $1::text)
     FROM done, ${SCHEMA}.actors AS actors WHERE actors.id = $1 AND actors.status NOT IN ${FINAL}`,
    [actorId, key, JSON.stringify(outcome), WAKE_TASK],
  );
}

/** Start the sub-agent runs a step asked for: their rows, and a wake each. */
export async function startChildren(db: Db, parentId: string, requests: readonly EffectRequest[]): Promise<void> {
  const kids = requests.flatMap((request) => (request.kind === 'child' ? [request] : []));
  if (kids.length === 0) return;
  await db.query(
    `INSERT INTO ${SCHEMA}.effects (actor_id, key, kind, status, request)
     SELECT $1, 'child:' || id, 'child', 'pending', request FROM unnest($2::text[], $3::jsonb[]) AS t(id, request)
     ON CONFLICT DO NOTHING`,
    [parentId, kids.map((kid) => kid.runId), kids.map((kid) => JSON.stringify(kid))],
  );
  const made = await db.query<{ id: string }>(
    `INSERT INTO ${SCHEMA}.actors (id, kind, agent_id, parent_id, status, task)
     SELECT id, 'agent', agent, $1, 'queued', task FROM unnest($2::text[], $3::text[], $4::text[]) AS t(id, agent, task)
     ON CONFLICT DO NOTHING RETURNING id`,
    [parentId, kids.map((kid) => kid.runId), kids.map((kid) => kid.agentId), kids.map((kid) => kid.task)],
  );
  await wake(db, made.rows.map((row) => row.id));
}

/** Put an event in the mailboxes of the runs that match `where` (on `actors`), and wake them; how many got it. */
export async function post(db: Db, actorIds: readonly string[], event: MailboxEvent, where = `status NOT IN ${FINAL}`): Promise<number> {
  if (actorIds.length === 0) return 0;
  const posted = await db.query<{ actor_id: string }>(
    `INSERT INTO ${SCHEMA}.mailbox (actor_id, event) SELECT id, $2 FROM ${SCHEMA}.actors WHERE id = ANY($1::text[]) AND ${where} RETURNING actor_id`,
    [actorIds, JSON.stringify(event)],
  );
  await wake(db, posted.rows.map((row) => row.actor_id));
  return posted.rowCount ?? 0;
}

/** Cancel the runs a cancelled run was waiting for. */
export async function cancelChildren(db: Db, parentId: string): Promise<void> {
  const children = await db.query<{ id: string }>(`SELECT id FROM ${SCHEMA}.actors WHERE parent_id = $1 AND status NOT IN ${FINAL}`, [parentId]);
  await post(db, children.rows.map((row) => row.id), { cancel: `its parent ${parentId} was cancelled` });
}
