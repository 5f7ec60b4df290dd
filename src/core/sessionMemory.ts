/**
 * A session's memory as the tools of its runs see it (`ctx.session`): the contract between the
 * tools, the executor that hands it over, and the session store that keeps it. Types only.
 */

/**
 * A JSON value: what a memory entry holds (and what survives a round trip through a file).
 *
 * @example
 * ```ts
 * const value: JsonValue = { plan: ['search', 'answer'], attempts: 2, done: false, note: null };
 * ```
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * One namespace of a session's memory. Reads are synchronous and return copies; writes resolve
 * once saved.
 *
 * @example
 * ```ts
 * const notes = session.memory('notes');
 * await notes.set('plan', { steps: ['search', 'answer'] });
 * notes.get('plan'); // { steps: ['search', 'answer'] }
 * ```
 */
export interface SessionMemory {
  readonly namespace: string;
  /** The value under `key` (as stored, i.e. redacted), or `undefined` when there is none. */
  get(key: string): JsonValue | undefined;
  /** Store a JSON value under `key`; rejects with `SessionError` (`session_invalid_value`) for anything else. */
  set(key: string, value: JsonValue): Promise<void>;
  /** Remove `key`; resolves to false when there was nothing to remove. */
  delete(key: string): Promise<boolean>;
  /** Every key and value of the namespace, in the order they were first set. */
  entries(): Array<[string, JsonValue]>;
}
