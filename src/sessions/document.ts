/**
 * The session document: one JSON file per session holding its conversation, the runs that
 * wrote it and its namespaced key-value memory. The schema and the type share a name; the
 * document carries a schema version like every persisted record, and readers refuse newer ones.
 */
import type { JsonValue as JsonValueType } from '../core/sessionMemory.ts';
import { z } from 'zod';
import { Message } from '../core/messages.ts';

/**
 * Version of the session document; readers refuse newer ones.
 *
 * @example
 * ```ts
 * const empty: SessionDocument = { v: SESSION_VERSION, id: 'support-42', createdAt: 0, updatedAt: 0, messages: [], runs: [], memory: {} };
 * ```
 */
export const SESSION_VERSION = 1;

/**
 * How large the parts of a session may be. Every write is a rewrite of the whole document, so a
 * single value must stay small next to the conversation; nesting is bounded so reading a file
 * back can never exhaust the stack.
 *
 * @example
 * ```ts
 * if (key.length > SESSION_LIMITS.keyLength) key = key.slice(0, SESSION_LIMITS.keyLength);
 * ```
 */
export const SESSION_LIMITS = {
  /** Characters of a session id. */
  idLength: 256,
  /** Characters of a run id. */
  runIdLength: 256,
  /** Characters of a memory namespace. */
  namespaceLength: 128,
  /** Characters of a memory key. */
  keyLength: 256,
  /** Characters of one memory value written as JSON. */
  valueChars: 256 * 1024,
  /** Levels of arrays and objects inside one memory value. */
  valueDepth: 64,
} as const;

/** A JSON value (the type lives with the session-memory contract in core). */
export type JsonValue = JsonValueType;

/**
 * The zod schema of a JSON value (finite numbers, plain objects and arrays, no `undefined`).
 *
 * @example
 * ```ts
 * JsonValue.safeParse({ a: [1, 'two', null] }).success; // true
 * JsonValue.safeParse(() => 1).success;                 // false
 * ```
 */
export const JsonValue: z.ZodType<JsonValue> = z.json();

/** Levels of arrays and objects in a JSON value (0 for a string, number, boolean or null). */
function depthOf(value: JsonValue): number {
  if (value === null || typeof value !== 'object') return 0;
  let deepest = 0;
  for (const item of Object.values(value)) deepest = Math.max(deepest, depthOf(item));
  return deepest + 1;
}

/** A memory value as the file holds it: never deeper than a write lets through. */
const StoredValue = JsonValue.refine((value) => depthOf(value) <= SESSION_LIMITS.valueDepth, {
  message: `nested more than ${SESSION_LIMITS.valueDepth} levels deep`,
});

/**
 * One run that added a turn to the session, and when (ms since the epoch).
 *
 * @example
 * ```ts
 * SessionRun.parse({ runId: 'run_1', at: Date.now() });
 * ```
 */
export const SessionRun = z.object({
  runId: z.string().min(1),
  at: z.number(),
});
export type SessionRun = z.infer<typeof SessionRun>;

/**
 * The whole session file.
 *
 * @example
 * ```ts
 * SessionDocument.parse({ v: 1, id: 'support-42', createdAt: 0, updatedAt: 0, messages: [], runs: [], memory: { notes: { plan: 'x' } } });
 * ```
 */
export const SessionDocument = z.object({
  v: z.literal(SESSION_VERSION),
  /** The session id, redacted like everything else stored (so it is checked, never trusted, on open). */
  id: z.string().min(1),
  /** Milliseconds since the epoch. */
  createdAt: z.number(),
  updatedAt: z.number(),
  messages: z.array(Message),
  runs: z.array(SessionRun).superRefine((runs, ctx) => {
    const seen = new Set<string>();
    for (const [i, run] of runs.entries()) {
      if (seen.has(run.runId)) ctx.addIssue({ code: 'custom', path: [i, 'runId'], message: `duplicate run ${run.runId}` });
      seen.add(run.runId);
    }
  }),
  /** Namespace → key → value. */
  memory: z.record(z.string(), z.record(z.string(), StoredValue)),
});
export type SessionDocument = z.infer<typeof SessionDocument>;

/**
 * A session that has never been written.
 *
 * @example
 * ```ts
 * emptySessionDocument('support-42', Date.now()).messages; // []
 * ```
 */
export function emptySessionDocument(id: string, now: number): SessionDocument {
  return { v: SESSION_VERSION, id, createdAt: now, updatedAt: now, messages: [], runs: [], memory: {} };
}
