/** Each migration runs once, in one transaction under an advisory lock, so workers starting together do not race. */
import type pg from 'pg';
import { Logger, runMigrations } from 'graphile-worker';
import { transaction } from './transaction.ts';
import { DurableRunError } from './errors.ts';

interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export const SCHEMA = 'actorloop';

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'actors, their logs, mailboxes, calls, steps and workers',
    sql: `
      CREATE TABLE ${SCHEMA}.actors (
        id text PRIMARY KEY,
        kind text NOT NULL DEFAULT 'agent',
        agent_id text NOT NULL,
        parent_id text,
        status text NOT NULL,
        version bigint NOT NULL DEFAULT 0,
        task text NOT NULL,
        options jsonb NOT NULL DEFAULT '{}',
        result jsonb,
        log_length integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX actors_agent_created ON ${SCHEMA}.actors (agent_id, created_at DESC);
      CREATE INDEX actors_parent ON ${SCHEMA}.actors (parent_id) WHERE parent_id IS NOT NULL;
      CREATE TABLE ${SCHEMA}.log (
        actor_id text NOT NULL REFERENCES ${SCHEMA}.actors (id) ON DELETE CASCADE,
        seq integer NOT NULL,
        line text NOT NULL,
        PRIMARY KEY (actor_id, seq)
      );
      CREATE TABLE ${SCHEMA}.mailbox (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        actor_id text NOT NULL REFERENCES ${SCHEMA}.actors (id) ON DELETE CASCADE,
        event jsonb NOT NULL
      );
      CREATE INDEX mailbox_actor ON ${SCHEMA}.mailbox (actor_id, id);
      CREATE TABLE ${SCHEMA}.effects (
        actor_id text NOT NULL REFERENCES ${SCHEMA}.actors (id) ON DELETE CASCADE,
        key text NOT NULL,
        kind text NOT NULL,
        status text NOT NULL,
        request jsonb NOT NULL,
        outcome jsonb,
        claimed_by text,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        PRIMARY KEY (actor_id, key)
      );
      CREATE INDEX effects_claimed ON ${SCHEMA}.effects (claimed_by) WHERE status <> 'done';
      CREATE TABLE ${SCHEMA}.steps (
        actor_id text NOT NULL REFERENCES ${SCHEMA}.actors (id) ON DELETE CASCADE,
        version bigint NOT NULL,
        events integer NOT NULL,
        worker text NOT NULL,
        started_at timestamptz NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (actor_id, version)
      );
      CREATE TABLE ${SCHEMA}.workers (
        id text PRIMARY KEY,
        job_workers text[] NOT NULL DEFAULT '{}',
        host text NOT NULL,
        pid integer NOT NULL,
        started_at timestamptz NOT NULL DEFAULT now(),
        heartbeat_at timestamptz NOT NULL DEFAULT now()
      );`,
  },
  {
    version: 2,
    name: 'where each run\'s last checkpoint is, when each call was asked for, and session memory',
    sql: `
      ALTER TABLE ${SCHEMA}.actors ADD COLUMN checkpoint_at integer;
      ALTER TABLE ${SCHEMA}.effects ADD COLUMN since integer NOT NULL DEFAULT 0;
      CREATE TABLE ${SCHEMA}.session_memory (
        session_id text NOT NULL,
        namespace text NOT NULL,
        key text NOT NULL,
        value jsonb NOT NULL,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (session_id, namespace, key)
      );`,
  },
  {
    version: 3,
    name: 'the last journal entry each log row holds, so a reader asks only for the rows after what it has',
    // Rows written before it are always read: parsing them here (as jsonb) would fail on a NUL or half a surrogate pair the JSON text escapes.
    sql: `
      ALTER TABLE ${SCHEMA}.log ADD COLUMN last_entry integer;
      UPDATE ${SCHEMA}.log SET last_entry = 2147483647 WHERE line ~ '^\\{"v":[0-9]+,"kind":"(journal|event)"';`,
  },
  {
    version: 4,
    name: 'image and file bytes by content hash, named by the runs that refer to them',
    // A blob goes with the last run naming it. The lock first, then a fresh look: a run queued meanwhile that names it keeps it.
    sql: `
      CREATE TABLE ${SCHEMA}.blobs (
        ref text PRIMARY KEY,
        data bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      ALTER TABLE ${SCHEMA}.actors ADD COLUMN blobs text[] NOT NULL DEFAULT '{}';
      CREATE INDEX actors_blobs ON ${SCHEMA}.actors USING gin (blobs) WHERE cardinality(blobs) > 0;
      CREATE FUNCTION ${SCHEMA}.drop_unnamed_blobs() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM 1 FROM ${SCHEMA}.blobs WHERE ref = ANY(OLD.blobs) ORDER BY ref FOR UPDATE;
        DELETE FROM ${SCHEMA}.blobs AS b WHERE b.ref = ANY(OLD.blobs)
          AND NOT EXISTS (SELECT 1 FROM ${SCHEMA}.actors AS a WHERE cardinality(a.blobs) > 0 AND a.blobs @> ARRAY[b.ref]);
        RETURN NULL;
      END $$;
      CREATE TRIGGER actors_drop_blobs AFTER DELETE ON ${SCHEMA}.actors FOR EACH ROW WHEN (cardinality(OLD.blobs) > 0)
        EXECUTE FUNCTION ${SCHEMA}.drop_unnamed_blobs();`,
  },
];

export const SCHEMA_VERSION = MIGRATIONS.at(-1)?.version ?? 0;

export interface MigrationReport {
  readonly from: number;
  readonly to: number;
  readonly applied: readonly string[];
}

/** graphile-worker's schema first, then ours. Idempotent. */
export async function migrate(pool: pg.Pool): Promise<MigrationReport> {
  await runMigrations({ pgPool: pool, logger: quietLogger });
  return transaction(pool, async (client) => {
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('${SCHEMA}.migrations'))`);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${SCHEMA}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const from = await currentVersion(client);
    if (from > SCHEMA_VERSION) {
      throw DurableRunError.schema(
        `The database's actorloop schema is at version ${from}; this actorloop knows up to ${SCHEMA_VERSION}. Upgrade actorloop on this host.`,
      );
    }
    const applied: string[] = [];
    for (const migration of MIGRATIONS) {
      if (migration.version <= from) continue;
      await client.query(migration.sql);
      await client.query(`INSERT INTO ${SCHEMA}.schema_migrations (version, name) VALUES ($1, $2)`, [migration.version, migration.name]);
      applied.push(`${migration.version}: ${migration.name}`);
    }
    return { from, to: SCHEMA_VERSION, applied };
  });
}

export async function checkSchema(pool: pg.Pool): Promise<void> {
  const result = await pool.query<{ exists: boolean }>(`SELECT to_regclass('${SCHEMA}.schema_migrations') IS NOT NULL AS exists`);
  const version = result.rows[0]?.exists === true ? await currentVersion(pool) : 0;
  if (version !== SCHEMA_VERSION) {
    throw DurableRunError.schema(
      version < SCHEMA_VERSION
        ? `The database's actorloop schema is at version ${version}, this actorloop needs ${SCHEMA_VERSION}: run \`actorloop db migrate --database-url …\` (or migrate: true).`
        : `The database's actorloop schema is at version ${version}; this actorloop knows up to ${SCHEMA_VERSION}. Upgrade actorloop on this host.`,
    );
  }
}

async function currentVersion(client: pg.Pool | pg.PoolClient): Promise<number> {
  const result = await client.query<{ version: number | null }>(`SELECT max(version) AS version FROM ${SCHEMA}.schema_migrations`);
  return result.rows[0]?.version ?? 0;
}

/** graphile-worker logs every job at info level; only its warnings and errors matter here. */
export const quietLogger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') console.warn(`[actorloop worker] ${message}`);
});
