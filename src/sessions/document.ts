/** One JSON file per session: its conversation, the runs that wrote it, and its namespaced memory. */
import type { JsonValue as JsonValueType } from '../core/sessionMemory.ts';
import { z } from 'zod';
import { Message } from '../core/messages.ts';

/** Readers refuse newer versions. */
export const SESSION_VERSION = 1;

/** Every write rewrites the whole document, so a value must stay small; bounded nesting keeps reading it back off the stack's limit. */
export const SESSION_LIMITS = {
  idLength: 256,
  runIdLength: 256,
  namespaceLength: 128,
  keyLength: 256,
  /** Characters of one memory value written as JSON. */
  valueChars: 256 * 1024,
  valueDepth: 64,
} as const;

export type JsonValue = JsonValueType;

export const JsonValue: z.ZodType<JsonValue> = z.json();

function depthOf(value: JsonValue): number {
  if (value === null || typeof value !== 'object') return 0;
  let deepest = 0;
  for (const item of Object.values(value)) deepest = Math.max(deepest, depthOf(item));
  return deepest + 1;
}

/** Never deeper than a write lets through. */
const StoredValue = JsonValue.refine((value) => depthOf(value) <= SESSION_LIMITS.valueDepth, {
  message: `nested more than ${SESSION_LIMITS.valueDepth} levels deep`,
});

export const SessionRun = z.object({
  runId: z.string().min(1),
  at: z.number(),
});
export type SessionRun = z.infer<typeof SessionRun>;

export const SessionDocument = z.object({
  v: z.literal(SESSION_VERSION),
  /** Redacted like everything else stored, so it is checked, never trusted, on open. */
  id: z.string().min(1),
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
  memory: z.record(z.string(), z.record(z.string(), StoredValue)),
});
export type SessionDocument = z.infer<typeof SessionDocument>;

export function emptySessionDocument(id: string, now: number): SessionDocument {
  return { v: SESSION_VERSION, id, createdAt: now, updatedAt: now, messages: [], runs: [], memory: {} };
}
