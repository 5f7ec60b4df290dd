import { z } from 'zod';
import type { InspectionEvent } from 'xstate';
import type { JsonValue, Sanitizer } from '../security/sanitize.ts';

export const InspectionRecordType = z.enum(['@xstate.actor', '@xstate.event', '@xstate.snapshot', '@xstate.action', '@xstate.microstep']);
export type InspectionRecordType = z.infer<typeof InspectionRecordType>;

const Json = z.json();

/** One line of a recording; every payload field has been through the sanitiser. */
export const InspectionRecord = z.object({
  v: z.literal(1),
  seq: z.number().int().nonnegative(),
  time: z.number(),
  type: InspectionRecordType,
  rootId: z.string(),
  actorId: z.string(),
  sessionId: z.string(),
  parentSessionId: z.string().optional(),
  definition: Json.optional(),
  event: Json.optional(),
  sourceSessionId: z.string().optional(),
  /** `@xstate.microstep` keeps only status and value. */
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
  action: z.object({ type: z.string(), params: Json.optional() }).optional(),
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

/** Reads XState's actor internals (`id`, `_parent`, `logic`) defensively. */
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
      // State value only: the context is in the `@xstate.snapshot` record that ends the step.
      return { ...base, event: clean(event.event), snapshot: snapshotOf(event.snapshot, clean, false), transitions: clean(event._transitions) };
    case '@xstate.action':
      return { ...base, action: { type: String(event.action.type), params: clean(event.action.params) } };
    default:
      return undefined;
  }
}

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
