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

/** Drop `context.messages` and any invoked child's `input.messages`, keeping their lengths. */
export function packSnapshot(persisted: unknown): Json {
  if (!isObject(persisted)) return {};
  const out: Json = { ...persisted };
  if (isObject(persisted.context)) out.context = { ...persisted.context, messages: [] };
  if (isObject(persisted.children)) {
    const children: Json = {};
    for (const [id, child] of Object.entries(persisted.children)) children[id] = packChild(child);
    out.children = children;
  }
  return out;
}

function packChild(child: unknown): unknown {
  if (!isObject(child) || !isObject(child.snapshot) || !isObject(child.snapshot.input)) return child;
  const input = child.snapshot.input;
  if (!Array.isArray(input.messages)) return child;
  return { ...child, snapshot: { ...child.snapshot, input: { ...input, messages: null, $messageCount: input.messages.length } } };
}

/** Put the conversation back into a packed snapshot. */
export function unpackSnapshot(packed: Json, messages: readonly Message[]): Json {
  const out: Json = { ...packed };
  if (isObject(packed.context)) out.context = { ...packed.context, messages: [...messages] };
  if (isObject(packed.children)) {
    const children: Json = {};
    for (const [id, child] of Object.entries(packed.children)) children[id] = unpackChild(child, messages);
    out.children = children;
  }
  return out;
}

function unpackChild(child: unknown, messages: readonly Message[]): unknown {
  if (!isObject(child) || !isObject(child.snapshot) || !isObject(child.snapshot.input)) return child;
  const { $messageCount, ...input } = child.snapshot.input;
  if (typeof $messageCount !== 'number') return child;
  return { ...child, snapshot: { ...child.snapshot, input: { ...input, messages: messages.slice(0, $messageCount) } } };
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
