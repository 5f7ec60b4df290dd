/** One statement; nothing is written unless the run is still at the version the step started from. */
import type pg from 'pg';
import type { EffectOutcome, EffectRequest } from './durable.ts';
import type { ClaimedCall } from './effects.ts';
import { CHANNEL } from './engine.ts';
import { FOLLOW_LOCK, stepNotice } from './notices.ts';
import { SCHEMA } from './migrations.ts';
import { lineKind, LOG_VERSION } from '../persistence/records.ts';
import { defined } from '../core/defined.ts';
import { jsonbText } from './jsonb.ts';
import { journalSequences } from './stepStore.ts';
import type { Blobs } from './blobs.ts';
import { DurableRunError } from './errors.ts';

export interface StepWrite {
  readonly actorId: string;
  readonly agentId: string;
  readonly workerId: string;
  /** The step started from the one before. */
  readonly version: number;
  readonly from: number;
  readonly lines: readonly string[];
  readonly calls: readonly (readonly [string, EffectRequest])[];
  /** Marked begun before it is made: a tool that must not run twice. */
  readonly marks: readonly boolean[];
  readonly events: number;
  readonly startedAt: Date;
  readonly status: string;
  /** False: the run's status stayed as it was, so only a process that follows the agent needs the notice (default true). */
  readonly announce?: boolean;
  readonly result: unknown;
  /** A call made within this step has no row yet. */
  readonly made: Made;
}

export interface MadeCall {
  readonly request: EffectRequest;
  readonly outcome: EffectOutcome;
  /** Bytes of the images its outcome refers to, stored with it. */
  readonly blobs?: Blobs;
}
export type Made = ReadonlyMap<string, MadeCall>;

/** The bytes the outcomes of `made` bring. */
export function madeBlobs(made: Made): Map<string, string> {
  const all = new Map<string, string>();
  for (const { blobs } of made.values()) for (const [ref, data] of blobs ?? []) all.set(ref, data);
  return all;
}

export interface Written {
  /** False when the run had moved on: nothing was written. */
  readonly updated: boolean;
  /** `begun` when one that must not run twice had begun before. */
  readonly claimed: readonly { readonly key: string; readonly begun: boolean }[];
}

export async function writeStep(db: pg.Pool | pg.PoolClient, write: StepWrite): Promise<Written> {
  const written = await db.query<{ updated: number; claimed: { key: string; begun: boolean }[] | null }>({
    name: 'actorloop_step_write',
    text: `WITH updated AS (
         UPDATE ${SCHEMA}.actors SET version = $8, status = $11, result = COALESCE($12::jsonb, result), log_length = $2::int + cardinality($19::int[]),
                checkpoint_at = COALESCE($17::int, checkpoint_at), updated_at = now()
         WHERE id = $1 AND version = $8 - 1 RETURNING 1
       ), made AS (
         INSERT INTO ${SCHEMA}.effects AS effects (actor_id, key, kind, status, request, outcome, finished_at, since)
         SELECT $1, key, request->>'kind', 'done', request, outcome, now(), $2::int + cardinality($19::int[]) FROM unnest($15::text[], $16::jsonb[], $18::jsonb[]) AS t(key, outcome, request)
         WHERE EXISTS (SELECT 1 FROM updated)
         ON CONFLICT (actor_id, key) DO UPDATE SET status = 'done', outcome = EXCLUDED.outcome, finished_at = now(), claimed_by = NULL WHERE effects.status <> 'done'
         RETURNING 1
       ), logged AS (
         INSERT INTO ${SCHEMA}.log (actor_id, seq, line, last_entry) SELECT $1, $2::int + ord - 1, line, last_entry FROM unnest(string_to_array($3::text, chr(10)), $19::int[]) WITH ORDINALITY AS t(line, last_entry, ord) WHERE EXISTS (SELECT 1 FROM updated) RETURNING 1
       ), calls AS (
         INSERT INTO ${SCHEMA}.effects AS effects (actor_id, key, kind, status, request, claimed_by, since)
         SELECT $1, key, request->>'kind', CASE WHEN mark THEN 'running' ELSE 'pending' END, request, $7, $2::int + cardinality($19::int[]) FROM unnest($4::text[], $5::jsonb[], $6::boolean[]) AS t(key, request, mark)
         WHERE EXISTS (SELECT 1 FROM updated)
         ON CONFLICT (actor_id, key) DO UPDATE SET claimed_by = EXCLUDED.claimed_by
         WHERE effects.status <> 'done' AND (effects.claimed_by IS NULL OR NOT EXISTS (SELECT 1 FROM ${SCHEMA}.workers AS w WHERE w.id = effects.claimed_by))
         RETURNING key, (xmax <> 0 AND status = 'running') AS begun
       ), stepped AS (
         INSERT INTO ${SCHEMA}.steps (actor_id, version, events, worker, started_at, applied_at) SELECT $1, $8, $9, $7, $10, clock_timestamp() WHERE EXISTS (SELECT 1 FROM updated) RETURNING 1
       )
       SELECT (SELECT count(*) FROM updated)::int AS updated, (SELECT json_agg(json_build_object('key', key, 'begun', begun)) FROM calls) AS claimed,
              (SELECT count(*) FROM made) AS made, (SELECT count(*) FROM logged) AS logged, (SELECT count(*) FROM stepped) AS stepped,
              CASE WHEN EXISTS (SELECT 1 FROM updated) AND ($20 OR NOT pg_try_advisory_xact_lock($21, hashtext($22))) THEN pg_notify($13, $14) END`,
    values: [
      write.actorId,
      write.from,
      joinLines(write.lines),
      write.calls.map(([key]) => key),
      write.calls.map(([, request]) => jsonbText(storedRequest(request))),
      write.marks,
      write.workerId,
      write.version,
      write.events,
      write.startedAt,
      write.status,
      write.result === undefined ? null : jsonbText(write.result),
      CHANNEL,
      stepNotice({ actor: write.actorId, agent: write.agentId, status: write.status, from: write.from, to: write.from + write.lines.length }),
      [...write.made.keys()],
      [...write.made.values()].map(({ outcome }) => jsonbText(outcome)),
      lastCheckpoint(write.from, write.lines),
      [...write.made.values()].map(({ request }) => jsonbText(storedRequest(request))),
      write.lines.map(lastEntry),
      write.announce ?? true,
      FOLLOW_LOCK,
      write.agentId,
    ],
  });
  const row = written.rows[0];
  return { updated: row?.updated === 1, claimed: row?.claimed ?? [] };
}

/**
 * The lines as one text, split back by the statement: a `text[]` parameter escapes every quote of
 * every line on the client, and lines are JSON, which has no raw newline.
 */
function joinLines(lines: readonly string[]): string {
  if (lines.some((line) => line.includes('\n'))) throw new DurableRunError('A journal line holds a newline; the step was not written.');
  return lines.join('\n');
}

/** A model call by its size only: the conversation is in the run's log, and a retry rebuilds its request. */
export function storedRequest(request: EffectRequest): unknown {
  if (request.kind !== 'model') return request;
  const { messages, tools, model } = request.request;
  return { kind: 'model', agentId: request.agentId, ...defined({ model }), messages: messages.length, tools: tools?.length ?? 0 };
}

const CHECKPOINT = `{"v":${LOG_VERSION},"kind":"checkpoint"`;

/** The last journal entry a line holds, so a reader that has the entries up to some sequence asks only for the rows after it. */
function lastEntry(line: string): number | null {
  const kind = lineKind(line);
  if (kind === 'journal') return journalSequences(line).at(-1) ?? null;
  if (kind === 'event') return (JSON.parse(line) as { entry: { sequence: number } }).entry.sequence;
  return null;
}

function lastCheckpoint(from: number, lines: readonly string[]): number | null {
  for (let i = lines.length - 1; i >= 0; i--) if (lines[i]?.startsWith(CHECKPOINT) === true) return from + i;
  return null;
}

export function claimedCalls(calls: readonly (readonly [string, EffectRequest])[], claimed: Written['claimed'], session: string | undefined): ClaimedCall[] {
  const byKey = new Map(calls);
  return claimed.flatMap(({ key, begun }): ClaimedCall[] => {
    const request = byKey.get(key);
    return request === undefined || request.kind === 'child' ? [] : [{ key, request, begun, ...defined({ session }) }];
  });
}
