/**
 * Keys from what a call is, not the provider's id: providers reuse call ids (some restart at
 * `call_0` every response), so an id alone would answer a new call with an old call's result.
 */
import { hash } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';

export interface CallKey {
  readonly key: string;
  readonly args: string;
}

export function callKey(runId: string, iteration: number, position: number, tool: string, args: unknown): CallKey {
  const digest = hash('sha256', `${tool}\u0000${stringify(args) ?? 'undefined'}`, 'base64url').slice(0, 22);
  return { key: `${runId}:${iteration}:${position}:${tool}:${digest}`, args: digest };
}
