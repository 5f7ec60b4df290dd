/**
 * How version 5 of actorloop wrote snapshots into a run's log, kept for the tests that check
 * that what it wrote is still read: the conversation left out (`packSnapshot`), and only the
 * context keys that changed since the previous snapshot (`contextDelta`).
 */
import { isObject, mapChildInput } from '../../src/persistence/snapshotCodec.ts';

type Json = Record<string, unknown>;

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

