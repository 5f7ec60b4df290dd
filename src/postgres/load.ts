/**
 * Reading a durable run for a step: its log and the outcomes of its calls, in one round trip.
 * Log rows are append-only, so a worker keeps the records it parsed of the runs it advanced
 * lately and parses only rows it has not seen (or that changed: a row is compared whole).
 */
import type pg from 'pg';
import type { LogRecord } from '../persistence/records.ts';
import { parseLine } from '../persistence/runLog.ts';
import { EffectOutcome } from './durable.ts';
import { CorruptRowError } from './errors.ts';
import { SCHEMA } from './migrations.ts';

interface Parsed {
  readonly lines: string[];
  readonly records: LogRecord[];
}

/** Runs whose parsed logs are kept, most recent last. */
const KEPT_RUNS = 2_000;
const parsedLogs = new Map<string, Parsed>();

export interface LoadedRun {
  readonly records: LogRecord[];
  readonly outcomes: Map<string, EffectOutcome>;
}

export async function loadRun(client: pg.PoolClient, actorId: string): Promise<LoadedRun> {
  const result = await client.query<{ part: number; seq: number | null; line: string | null; key: string | null; outcome: unknown }>({
    name: 'actorloop_load_run',
    text: `SELECT 0 AS part, seq, line, NULL AS key, NULL::jsonb AS outcome FROM ${SCHEMA}.log WHERE actor_id = $1
     UNION ALL
     SELECT 1, NULL, NULL, key, outcome FROM ${SCHEMA}.effects WHERE actor_id = $1 AND status = 'done'
     ORDER BY part, seq`,
    values: [actorId],
  });
  const known = parsedLogs.get(actorId);
  parsedLogs.delete(actorId);
  const lines: string[] = [];
  const records: LogRecord[] = [];
  const outcomes = new Map<string, EffectOutcome>();
  for (const row of result.rows) {
    if (row.part === 0) {
      const seq = row.seq ?? -1;
      const line = row.line ?? '';
      const index = lines.length;
      if (seq !== index) throw corruptLog(actorId, seq, `a gap in the sequence (expected ${index})`);
      lines.push(line);
      const cached = known?.lines[index] === line ? known.records[index] : undefined;
      if (cached !== undefined) {
        records.push(cached);
        continue;
      }
      const parsed = parseLine(line);
      if (!parsed.ok) throw corruptLog(actorId, seq, parsed.reason);
      records.push(parsed.value);
    } else {
      const key = row.key ?? '';
      const parsed = EffectOutcome.safeParse(row.outcome);
      if (!parsed.success) {
        throw new CorruptRowError(
          `Row actor_id=${actorId}, key=${key} of ${SCHEMA}.effects has an outcome that is not one (${parsed.error.issues[0]?.message ?? 'bad shape'}); it was left untouched: fix or delete it.`,
          { table: `${SCHEMA}.effects`, row: `actor_id=${actorId}, key=${key}`, runId: actorId },
        );
      }
      outcomes.set(key, parsed.data);
    }
  }
  parsedLogs.set(actorId, { lines, records });
  if (parsedLogs.size > KEPT_RUNS) parsedLogs.delete(parsedLogs.keys().next().value as string);
  return { records, outcomes };
}

function corruptLog(actorId: string, seq: number, why: string): CorruptRowError {
  return new CorruptRowError(
    `Row actor_id=${actorId}, seq=${seq} of ${SCHEMA}.log is corrupt (${why}); the run cannot be replayed. It was left untouched: restore it from a backup, or delete the run.`,
    { table: `${SCHEMA}.log`, row: `actor_id=${actorId}, seq=${seq}`, runId: actorId },
  );
}
