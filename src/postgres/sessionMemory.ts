/**
 * Every write is one committed statement, so an entry a call wrote stays if its worker dies; each tool
 * call reads the memory as it is when the call starts.
 */
import type pg from 'pg';
import type { SharedSessionMemory } from '../agent/types.ts';
import type { JsonValue, SessionMemory } from '../core/sessionMemory.ts';
import { TOOL_NAMESPACE } from '../agent/session.ts';
import { checkMemoryName, checkMemoryValue } from '../sessions/validate.ts';
import { SCHEMA } from './migrations.ts';
import { SessionError } from '../sessions/errors.ts';
import { asStored, jsonbText, storableText } from './jsonb.ts';

type Entries = Map<string, Map<string, JsonValue>>;

interface MemoryRow {
  readonly namespace: string;
  readonly key: string;
  readonly value: JsonValue;
}

function entriesOf(rows: readonly MemoryRow[]): Entries {
  const entries: Entries = new Map();
  for (const row of rows) {
    const namespace = entries.get(row.namespace) ?? new Map<string, JsonValue>();
    entries.set(row.namespace, namespace.set(row.key, row.value));
  }
  return entries;
}

/** Stored under the session's redacted id. */
export async function openSharedMemory(pool: pg.Pool, sessionId: string, redact: <T>(value: T) => T): Promise<SharedSessionMemory> {
  const stored = redact(sessionId);
  const read = async (): Promise<Entries> =>
    entriesOf(
      (await pool.query<MemoryRow>(`SELECT namespace, key, value FROM ${SCHEMA}.session_memory WHERE session_id = $1 ORDER BY seq`, [stored])).rows,
    );
  let entries = await read();
  let closed = false;
  const check = (): void => {
    if (closed) throw new SessionError('session_closed', `Session "${sessionId}" was closed. Open it again (agent.session(id)) to read or write its memory.`, { sessionId });
  };
  const memory = sharedNamespaces(pool, sessionId, stored, redact, () => entries, check);
  return {
    memory: (namespace) => {
      check();
      checkMemoryName('namespace', namespace, sessionId);
      checkStorableName('namespace', namespace, sessionId);
      return memory(namespace);
    },
    async refresh() {
      if (!closed) entries = await read();
    },
    close() {
      closed = true;
    },
  };
}

/** `sessionId` as its queued options keep it, redacted. One round trip. */
export async function toolSessionMemory(pool: pg.Pool, sessionId: string, redact: <T>(value: T) => T): Promise<SessionMemory> {
  const found = await pool.query<{ namespace: string; key: string; value: JsonValue }>({
    // Asked before every tool call of a session's durable run: prepared once per connection.
    name: 'actorloop_tool_session',
    text: `SELECT namespace, key, value FROM ${SCHEMA}.session_memory WHERE session_id = $1 AND namespace = $2 ORDER BY seq`,
    values: [sessionId, TOOL_NAMESPACE],
  });
  const entries = entriesOf(found.rows);
  return sharedNamespaces(pool, sessionId, sessionId, redact, () => entries, () => undefined)(TOOL_NAMESPACE);
}

/** Writes go through to the table in call order. */
function sharedNamespaces(
  pool: pg.Pool,
  sessionId: string,
  stored: string,
  redact: <T>(value: T) => T,
  current: () => Entries,
  check: () => void,
): (namespace: string) => SessionMemory {
  let queue: Promise<unknown> = Promise.resolve();
  /** Validate at once; write after the writes before it. */
  const write = <T>(prepare: () => () => Promise<T>): Promise<T> => {
    let work: () => Promise<T>;
    try {
      check();
      work = prepare();
    } catch (error) {
      return Promise.reject(error);
    }
    const done = queue.then(work, work);
    queue = done.catch(() => undefined);
    return done;
  };
  return (namespace) => ({
    namespace,
    get(key) {
      check();
      checkMemoryName('key', key, sessionId);
      const value = current().get(namespace)?.get(key);
      return value === undefined ? undefined : structuredClone(value);
    },
    set(key, value) {
      return write(() => {
        checkMemoryName('key', key, sessionId);
        checkStorableName('key', key, sessionId);
        checkMemoryValue(value, key, sessionId);
        // A redacted copy: what is stored never holds a secret, and the caller's object stays its own.
        // As the table gives it back: what this process reads is what the others read.
        const clean = asStored(redact({ [key]: structuredClone(value) })[key]);
        checkMemoryValue(clean, key, sessionId);
        return async () => {
          await pool.query(
            `INSERT INTO ${SCHEMA}.session_memory (session_id, namespace, key, value) VALUES ($1, $2, $3, $4)
             ON CONFLICT (session_id, namespace, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
            [stored, namespace, key, jsonbText(clean)],
          );
          const entries = current();
          entries.set(namespace, (entries.get(namespace) ?? new Map<string, JsonValue>()).set(key, clean));
        };
      });
    },
    delete(key) {
      return write(() => {
        checkMemoryName('key', key, sessionId);
        checkStorableName('key', key, sessionId);
        return async () => {
          const deleted = await pool.query(`DELETE FROM ${SCHEMA}.session_memory WHERE session_id = $1 AND namespace = $2 AND key = $3`, [stored, namespace, key]);
          current().get(namespace)?.delete(key);
          return deleted.rowCount === 1;
        };
      });
    },
    entries() {
      check();
      return [...(current().get(namespace) ?? [])].map(([key, value]): [string, JsonValue] => [key, structuredClone(value)]);
    },
  });
}

/** A text column holds no NUL, and half a surrogate pair would come back changed: the entry could not be found again. */
function checkStorableName(kind: 'namespace' | 'key', name: string, sessionId: string): void {
  if (storableText(name) === name) return;
  throw new SessionError('session_invalid_key', `Session "${sessionId}": a memory ${kind} must not contain a NUL character or half a surrogate pair (PostgreSQL cannot store it). Use a short descriptive name such as "plan".`, { sessionId });
}
