/**
 * Keys for tool calls, from what a call is rather than the provider's id for it: providers and
 * local servers reuse call ids (some number them from `call_0` in every response), so an id
 * alone would answer a new call with an old call's result. A key names the run, the iteration,
 * the call's position among the model's calls, the tool and a hash of its canonical arguments;
 * a recorded result is reused only for the call that has the same key.
 */
import { hash } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';

export interface CallKey {
  /** `<runId>:<iteration>:<position>:<tool>:<arguments hash>`: the idempotency key a tool receives. */
  readonly key: string;
  /** The hash of the tool's name and its arguments, canonical JSON (keys sorted). */
  readonly args: string;
}

/**
 * @example
 * ```ts
 * callKey('run_1', 2, 0, 'add', { b: 2, a: 1 }).key === callKey('run_1', 2, 0, 'add', { a: 1, b: 2 }).key; // true
 * ```
 */
export function callKey(runId: string, iteration: number, position: number, tool: string, args: unknown): CallKey {
  // One call, not a Hash object fed piece by piece: a key is made for every call a durable run makes.
  const digest = hash('sha256', `${tool}\u0000${stringify(args) ?? 'undefined'}`, 'base64url').slice(0, 22);
  return { key: `${runId}:${iteration}:${position}:${tool}:${digest}`, args: digest };
}
