/** What a memory entry holds: what survives a round trip through a file. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** One namespace of a session's memory: reads are synchronous and return copies; writes resolve once saved. */
export interface SessionMemory {
  readonly namespace: string;
  /** The value under `key` (as stored, i.e. redacted), or `undefined` when there is none. */
  get(key: string): JsonValue | undefined;
  /** Store a JSON value under `key`; rejects with `SessionError` (`session_invalid_value`) for anything else. */
  set(key: string, value: JsonValue): Promise<void>;
  delete(key: string): Promise<boolean>;
  /** Every key and value of the namespace, in the order they were first set. */
  entries(): Array<[string, JsonValue]>;
}
