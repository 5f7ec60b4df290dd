/**
 * Persisted agent snapshots without the conversation. The conversation is the one part of a
 * snapshot that grows with the run; it is written once, as `messages` records, and spliced back
 * on restore. Snapshots then stay roughly constant in size, so persisting every phase costs
 * the same at iteration 100 as at iteration 1.
 */
import type { Message } from '../conversation/messages.ts';

type Json = Record<string, unknown>;

/** A plain JSON object (not null, not an array). */
export const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Drop `context.messages` and any child's phase input's `messages`, keeping their lengths. */
export function packSnapshot(persisted: unknown): Json {
  if (!isObject(persisted)) return {};
  const out: Json = { ...persisted };
  if (isObject(persisted.context)) out.context = { ...persisted.context, messages: [] };
  if (isObject(persisted.children)) {
    const children: Json = {};
    for (const [id, child] of Object.entries(persisted.children)) children[id] = mapChildInput(child, packInput);
    out.children = children;
  }
  return out;
}

function packInput(input: Json): Json {
  return Array.isArray(input.messages) ? { ...input, messages: null, $messageCount: input.messages.length } : input;
}

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
function mapChildInput(child: unknown, map: (input: Json) => Json): unknown {
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

/**
 * The context keys of `next` whose values are not the same as in `previous` (by identity:
 * XState's assign keeps every value it does not set, and snapshots are never mutated), or
 * `undefined` when a key of `previous` is gone and only a whole context describes `next`.
 * `messages` is left out: packed snapshots carry the conversation as records.
 *
 * @example
 * ```ts
 * const limits = { maxIterations: 10 };
 * contextDelta({ limits, iteration: 1 }, { limits, iteration: 2 }); // { iteration: 2 }
 * ```
 */
export function contextDelta(previous: Json, next: Json): Json | undefined {
  const delta: Json = {};
  let kept = 0;
  for (const key in next) {
    if (key === 'messages') continue;
    if (Object.hasOwn(previous, key) && previous[key] === next[key]) kept++;
    else delta[key] = next[key];
  }
  for (const key in previous) if (key !== 'messages' && !Object.hasOwn(next, key)) return undefined;
  return kept === 0 ? undefined : delta;
}

/** A packed snapshot from the one before it and a delta record's snapshot (its context a delta). */
export function applyContextDelta(base: Json, delta: Json): Json {
  const context = isObject(base.context) && isObject(delta.context) ? { ...base.context, ...delta.context } : delta.context;
  return { ...delta, context };
}
