/**
 * The given fields without those whose value is `undefined`: `{ runId, ...defined({ reason, error }) }`
 * passes optional values on without writing a key set to `undefined`, which would overwrite a default when spread.
 */
export function defined<T extends Record<string, unknown>>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}
