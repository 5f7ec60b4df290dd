/**
 * What the PostgreSQL section asks the server itself: databases, the statistics views
 * (transactions of a database, WAL of the cluster), and the step latency the runtime keeps.
 */
import pg from 'pg';

export async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** Create an empty database on the cluster of `base` and return its URL. */
export async function createDatabase(base: string, name: string): Promise<string> {
  await withClient(base, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Counters that only grow; a phase's share is `after - before`. The WAL ones are null before PostgreSQL 14 (no pg_stat_wal). */
export interface DatabaseCounters {
  /** Transactions of this database: committed and rolled back. */
  readonly transactions: number;
  /** WAL of the whole cluster: records, bytes, and syncs to disk. */
  readonly walRecords: number | null;
  readonly walBytes: number | null;
  readonly walSyncs: number | null;
}

/**
 * The counters now. A backend reports its counts when it goes idle or exits, at most once a
 * second: read them after the batch's connections closed (`quiesce`), or the last are missing.
 */
export function databaseCounters(url: string): Promise<DatabaseCounters> {
  return withClient(url, async (client) => {
    const database = await client.query<{ transactions: number; version: number }>(
      `SELECT (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database())::float8 AS transactions,
              current_setting('server_version_num')::int AS version`,
    );
    const row = database.rows[0];
    if (row === undefined) throw new Error('pg_stat_database has no row for the bench database.');
    if (row.version < 140000) return { transactions: row.transactions, walRecords: null, walBytes: null, walSyncs: null };
    const wal = await client.query<{ records: number; bytes: number; syncs: number }>('SELECT wal_records::float8 AS records, wal_bytes::float8 AS bytes, wal_sync::float8 AS syncs FROM pg_stat_wal');
    const w = wal.rows[0];
    return { transactions: row.transactions, walRecords: w?.records ?? null, walBytes: w?.bytes ?? null, walSyncs: w?.syncs ?? null };
  });
}

export function countersBetween(before: DatabaseCounters, after: DatabaseCounters): DatabaseCounters {
  const delta = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);
  return {
    transactions: after.transactions - before.transactions,
    walRecords: delta(before.walRecords, after.walRecords),
    walBytes: delta(before.walBytes, after.walBytes),
    walSyncs: delta(before.walSyncs, after.walSyncs),
  };
}

/**
 * Vacuumed, analysed and checkpointed: each batch starts from the same state, not paying for the
 * setup's dead rows. Resolves once the connection that did it is gone, so its WAL is counted before the batch.
 */
export async function settle(url: string): Promise<void> {
  const pid = await withClient(url, async (client) => {
    await client.query('VACUUM ANALYZE');
    await client.query('CHECKPOINT');
    return (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid ?? 0;
  });
  await untilGone(url, 'pid = $1', [pid]);
}

/**
 * Resolves once no other connection to the database is open. A backend reports its counts
 * before it leaves pg_stat_activity, so they are all in the statistics views then.
 */
export const quiesce = (url: string): Promise<void> => untilGone(url, 'datname = current_database() AND pid <> pg_backend_pid()', []);

async function untilGone(url: string, where: string, values: readonly unknown[], timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  await withClient(url, async (client) => {
    for (;;) {
      const found = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${where}`, [...values]);
      if ((found.rows[0]?.n ?? 0) === 0 || Date.now() > deadline) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });
}

export interface StepLatency {
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** Relation or column missing: the runtime's tables changed shape. */
const SCHEMA_CHANGED = new Set(['42P01', '42703']);

/**
 * How long applying each event took, for an agent's runs, from the runtime's own record of its
 * steps (actorloop.steps: started_at, applied_at). Not part of its public API: if the table or
 * its columns are gone, the figures are NaN (shown as n/a), not an error.
 */
export async function stepLatency(url: string, agentId: string): Promise<StepLatency> {
  try {
    const found = await withClient(url, (client) =>
      client.query<{ count: number; p50: number | null; p99: number | null }>(
        `SELECT count(*)::int AS count,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
                percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99
         FROM (SELECT extract(epoch FROM steps.applied_at - steps.started_at)::float8 * 1000 AS ms
               FROM actorloop.steps AS steps JOIN actorloop.actors AS actors ON actors.id = steps.actor_id
               WHERE actors.agent_id = $1) AS steps`,
        [agentId],
      ),
    );
    const row = found.rows[0];
    return { count: row?.count ?? 0, p50Ms: row?.p50 ?? NaN, p99Ms: row?.p99 ?? NaN };
  } catch (error) {
    if (error instanceof Error && 'code' in error && typeof error.code === 'string' && SCHEMA_CHANGED.has(error.code)) return { count: NaN, p50Ms: NaN, p99Ms: NaN };
    throw error;
  }
}
