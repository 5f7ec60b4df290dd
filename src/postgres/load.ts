/**
 * One round trip reads the last checkpoint, its bases and what followed, never the whole log. Log rows
 * are append-only, so a worker keeps what it parsed lately and parses only rows it has not seen.
 */
import type pg from 'pg';
import type { LogRecord } from '../persistence/records.ts';
import { parseLine } from '../persistence/runLog.ts';
import { EffectOutcome } from './durable.ts';
import { SCHEMA } from './migrations.ts';
import { DurableRunError } from './errors.ts';

interface Parsed {
  readonly line: string;
  readonly record: LogRecord;
}

/** Most recent last. */
const KEPT_RUNS = 2_000;
const parsedLogs = new Map<string, Map<number, Parsed>>();

export interface LoadedRun {
  /** The checkpoints the last one builds on, it, and what followed. */
  readonly records: LogRecord[];
  readonly seqs: number[];
  readonly outcomes: Map<string, EffectOutcome>;
}

const BASE_AT = String.raw`"base":\{"at":([0-9]+),"bytes":[0-9]+\}\}$`;

export async function loadRun(client: pg.PoolClient, actorId: string, checkpointAt: number | null): Promise<LoadedRun> {
  const from = checkpointAt ?? 0;
  const result = await client.query<{ part: number; seq: number | null; line: string | null; key: string | null; outcome: unknown }>({
    name: 'actorloop_load_run',
    text: `WITH RECURSIVE chain (seq, line) AS (
       SELECT seq, line FROM ${SCHEMA}.log WHERE actor_id = $1 AND seq = $2 AND $4
       UNION ALL
       -- One index probe per link (LIMIT keeps the planner from turning it into a scan of the run's log).
       SELECT base.seq, base.line FROM chain, LATERAL (
         SELECT seq, line FROM ${SCHEMA}.log WHERE actor_id = $1 AND seq = substring(chain.line from '${BASE_AT}')::int LIMIT 1
       ) AS base
     )
     SELECT 0 AS part, seq, line, NULL AS key, NULL::jsonb AS outcome FROM chain WHERE seq < $2
     UNION ALL
     SELECT 0, seq, line, NULL, NULL FROM ${SCHEMA}.log WHERE actor_id = $1 AND seq >= $2
     UNION ALL
     SELECT 1, NULL, NULL, key, outcome FROM ${SCHEMA}.effects WHERE actor_id = $1 AND status = 'done' AND since >= $3
     ORDER BY part, seq`,
    // Calls asked for before the checkpoint were answered before it: it holds what they said.
    values: [actorId, from, checkpointAt === null ? 0 : checkpointAt + 1, checkpointAt !== null],
  });
  const known = parsedLogs.get(actorId);
  parsedLogs.delete(actorId);
  const kept = new Map<number, Parsed>();
  const records: LogRecord[] = [];
  const seqs: number[] = [];
  const outcomes = new Map<string, EffectOutcome>();
  let next = from;
  for (const row of result.rows) {
    if (row.part === 0) {
      const seq = row.seq ?? -1;
      const line = row.line ?? '';
      // The log from the checkpoint on has no gaps (the checkpoints before it are apart).
      if (seq >= from) {
        if (seq !== next) throw corruptLog(actorId, seq, `a gap in the sequence (expected ${next})`);
        next++;
      }
      const cached = known?.get(seq);
      const record = cached?.line === line ? cached.record : parse(actorId, seq, line);
      kept.set(seq, { line, record });
      records.push(record);
      seqs.push(seq);
    } else {
      const key = row.key ?? '';
      const parsed = EffectOutcome.safeParse(row.outcome);
      if (!parsed.success) {
        throw DurableRunError.corruptRow(
          `Row actor_id=${actorId}, key=${key} of ${SCHEMA}.effects has an outcome that is not one (${parsed.error.issues[0]?.message ?? 'bad shape'}); it was left untouched: fix or delete it.`,
          { table: `${SCHEMA}.effects`, row: `actor_id=${actorId}, key=${key}`, runId: actorId },
        );
      }
      outcomes.set(key, parsed.data);
    }
  }
  if (checkpointAt !== null && records[seqs.indexOf(checkpointAt)]?.kind !== 'checkpoint') {
    throw corruptLog(actorId, checkpointAt, `${SCHEMA}.actors says the run's last checkpoint is there, and it is not one`);
  }
  parsedLogs.set(actorId, kept);
  if (parsedLogs.size > KEPT_RUNS) parsedLogs.delete(parsedLogs.keys().next().value as string);
  return { records, seqs, outcomes };
}

function parse(actorId: string, seq: number, line: string): LogRecord {
  const parsed = parseLine(line);
  if (!parsed.ok) throw corruptLog(actorId, seq, parsed.reason);
  return parsed.value;
}

function corruptLog(actorId: string, seq: number, why: string): DurableRunError {
  return DurableRunError.corruptRow(
    `Row actor_id=${actorId}, seq=${seq} of ${SCHEMA}.log is corrupt (${why}); the run cannot be replayed. It was left untouched: restore it from a backup, or delete the run.`,
    { table: `${SCHEMA}.log`, row: `actor_id=${actorId}, seq=${seq}`, runId: actorId },
  );
}
