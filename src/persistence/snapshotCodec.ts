/**
 * Persisted agent snapshots without the conversation. The conversation is the one part of a
 * snapshot that grows with the run; it is written once, as `messages` records, and spliced back
 * on restore. Snapshots then stay roughly constant in size, so persisting every phase costs
 * the same at iteration 100 as at iteration 1.
 */
import type { Message } from '../conversation/messages.ts';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

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
