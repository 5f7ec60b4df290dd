/**
 * Reading the snapshots logs of version 5 and earlier hold. Those versions persisted the agent's
 * snapshot at phase boundaries without the conversation (written once, as `messages` records,
 * and spliced back here), each after the first holding only the context keys that changed.
 * Logs are now rebuilt from records instead; these are still read and resumed.
 */
import type { Message } from '../core/messages.ts';

type Json = Record<string, unknown>;

/** A plain JSON object (not null, not an array). */
export const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Put the conversation back into a packed snapshot. */
export function unpackSnapshot(packed: Json, messages: readonly Message[]): Json {
  const out: Json = { ...packed };
  if (isObject(packed.context)) out.context = { ...packed.context, messages: [...messages] };
  if (isObject(packed.children)) {
    const unpackInput = (input: Json): Json => {
      const { $messageCount, ...rest } = input;
      return typeof $messageCount === 'number' ? { ...rest, messages: messages.slice(0, $messageCount) } : input;
    };
    const children: Json = {};
    const current = packed.status === 'active' ? migrateChildren(packed.children) : packed.children;
    for (const [id, child] of Object.entries(current)) children[id] = mapChildInput(child, unpackInput);
    out.children = children;
  }
  return out;
}

/**
 * A child's phase input, mapped: the `phases` worker's job input (`snapshot.job.input`), or an
 * invoked actor's input (`snapshot.input`).
 */
export function mapChildInput(child: unknown, map: (input: Json) => Json): unknown {
  if (!isObject(child) || !isObject(child.snapshot)) return child;
  const snapshot = child.snapshot;
  if (isObject(snapshot.job) && isObject(snapshot.job.input)) return { ...child, snapshot: { ...snapshot, job: { ...snapshot.job, input: map(snapshot.job.input) } } };
  if (isObject(snapshot.input)) return { ...child, snapshot: { ...snapshot, input: map(snapshot.input) } };
  return child;
}

const PHASES = new Set(['hydrate', 'reason', 'gate', 'act']);

/**
 * Snapshots persisted before the agent machine had one `phases` worker held the phase in flight
 * as an invoked promise actor named after it (`children.reason`, …). An active run gets the
 * worker, with that phase as its job (so the run resumes into the same phase) or idle (it was
 * waiting for a human); other children pass unchanged.
 */
function migrateChildren(children: Json): Json {
  const out: Json = {};
  let job: Json | null = null;
  for (const [id, child] of Object.entries(children)) {
    if (isObject(child) && typeof child.src === 'string' && PHASES.has(child.src) && isObject(child.snapshot)) {
      if (child.snapshot.status === 'active' && isObject(child.snapshot.input)) job = { phase: child.src, input: child.snapshot.input };
      continue;
    }
    out[id] = child;
  }
  if ('phases' in out) return out;
  out.phases = { src: 'phases', syncSnapshot: false, snapshot: { status: 'active', output: undefined, error: undefined, input: undefined, job } };
  return out;
}

/** A packed snapshot from the one before it and a delta record's snapshot (its context a delta). */
export function applyContextDelta(base: Json, delta: Json): Json {
  const context = isObject(base.context) && isObject(delta.context) ? { ...base.context, ...delta.context } : delta.context;
  return { ...delta, context };
}
