/**
 * `InspectionRecord`: one XState inspection event as sanitised, versioned JSON — the line
 * format of offline recordings (`createJsonlRecorder`) and the schema they are read back with.
 */
import { z } from 'zod';
import type { InspectionEvent } from 'xstate';
import type { JsonValue, Sanitizer } from '../security/sanitize.ts';

/** The XState inspection event types a recording holds. */
export const InspectionRecordType = z.enum(['@xstate.actor', '@xstate.event', '@xstate.snapshot', '@xstate.action', '@xstate.microstep']);
export type InspectionRecordType = z.infer<typeof InspectionRecordType>;

const Json = z.json();

/**
 * One line of a recording. Every payload field has been through the sanitiser.
 *
 * @example
 * ```ts
 * const record = InspectionRecord.parse(JSON.parse(line));
 * if (record.type === '@xstate.snapshot') console.log(record.actorId, record.snapshot?.value);
 * ```
 */
export const InspectionRecord = z.object({
  /** Schema version of the record. */
  v: z.literal(1),
  /** 0, 1, 2 … in the order the events happened, per recorder. */
  seq: z.number().int().nonnegative(),
  /** Epoch milliseconds. */
  time: z.number(),
  type: InspectionRecordType,
  /** Session id of the root actor of the system the event belongs to. */
  rootId: z.string(),
  /** The actor's id (`agent`'s root has its session id; invoked children their invoke id). */
  actorId: z.string(),
  sessionId: z.string(),
  parentSessionId: z.string().optional(),
  /** `@xstate.actor` of a machine: `machine.toJSON()` (ids, states, transitions). */
  definition: Json.optional(),
  /** `@xstate.event`, `@xstate.snapshot`, `@xstate.microstep`: the event, sanitised. */
  event: Json.optional(),
  /** `@xstate.event`: who sent it. */
  sourceSessionId: z.string().optional(),
  /** `@xstate.snapshot`: the actor's state after the event; `@xstate.microstep`: its status and value only. */
  snapshot: z
    .object({
      status: z.string(),
      value: Json.optional(),
      context: Json.optional(),
      output: Json.optional(),
      error: Json.optional(),
      children: z.array(z.string()).optional(),
    })
    .optional(),
  /** `@xstate.action`: the action executed. */
  action: z.object({ type: z.string(), params: Json.optional() }).optional(),
  /** `@xstate.microstep`: the transitions taken. */
  transitions: Json.optional(),
});
export type InspectionRecord = z.infer<typeof InspectionRecord>;

const isRecordType = (type: string): type is InspectionRecordType => InspectionRecordType.safeParse(type).success;

function read(object: unknown, key: string): unknown {
  if (object === null || (typeof object !== 'object' && typeof object !== 'function')) return undefined;
  try {
    return (object as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

const stringOrUndefined = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * Convert one XState inspection event into a record; `undefined` for event types a recording
 * does not hold. Reads XState's actor internals (`id`, `_parent`, `logic`) defensively.
 *
 * @example
 * ```ts
 * const clean = createSanitizer();
 * const record = toInspectionRecord(event, 0, Date.now(), clean);
 * ```
 */
export function toInspectionRecord(event: InspectionEvent, seq: number, time: number, clean: Sanitizer): InspectionRecord | undefined {
  if (!isRecordType(event.type)) return undefined;
  const actorRef: unknown = event.actorRef;
  const sessionId = stringOrUndefined(read(actorRef, 'sessionId')) ?? 'unknown';
  const parentSessionId = stringOrUndefined(read(read(actorRef, '_parent'), 'sessionId'));
  const base = {
    v: 1 as const,
    seq,
    time,
    type: event.type,
    rootId: event.rootId,
    actorId: stringOrUndefined(read(actorRef, 'id')) ?? sessionId,
    sessionId,
    ...(parentSessionId === undefined ? {} : { parentSessionId }),
  };
  switch (event.type) {
    case '@xstate.actor': {
      const definition = definitionOf(read(actorRef, 'logic'), clean);
      return definition === undefined ? base : { ...base, definition };
    }
    case '@xstate.event': {
      const sourceSessionId = stringOrUndefined(read(event.sourceRef, 'sessionId'));
      return { ...base, event: clean(event.event), ...(sourceSessionId === undefined ? {} : { sourceSessionId }) };
    }
    case '@xstate.snapshot':
      return { ...base, event: clean(event.event), snapshot: snapshotOf(event.snapshot, clean) };
    case '@xstate.microstep':
      // State value only: the context is in the `@xstate.snapshot` record that ends the step,
      // and repeating it per microstep made recordings several times larger.
      return { ...base, event: clean(event.event), snapshot: snapshotOf(event.snapshot, clean, false), transitions: clean(event._transitions) };
    case '@xstate.action':
      return { ...base, action: { type: String(event.action.type), params: clean(event.action.params) } };
    default:
      return undefined;
  }
}

/** A machine's JSON definition, or a plain config object; nothing for promise/callback logic. */
function definitionOf(logic: unknown, clean: Sanitizer): JsonValue | undefined {
  const toJSON = read(logic, 'toJSON');
  if (typeof toJSON === 'function') {
    try {
      return clean(toJSON.call(logic));
    } catch {
      return '[Unreadable]';
    }
  }
  const config = read(logic, 'config');
  return config !== null && typeof config === 'object' ? clean(config) : undefined;
}

function snapshotOf(snapshot: unknown, clean: Sanitizer, full = true): NonNullable<InspectionRecord['snapshot']> {
  const status = stringOrUndefined(read(snapshot, 'status')) ?? 'unknown';
  const out: NonNullable<InspectionRecord['snapshot']> = { status };
  for (const key of full ? (['value', 'context', 'output', 'error'] as const) : (['value'] as const)) {
    const value = read(snapshot, key);
    if (value !== undefined) out[key] = clean(value);
  }
  const children = read(snapshot, 'children');
  if (children !== null && typeof children === 'object') out.children = Object.keys(children).map((id) => String(clean(id)));
  return out;
}
