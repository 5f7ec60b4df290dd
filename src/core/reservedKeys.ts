/**
 * Keys a run's log reader refuses (secure-json-parse's rule): `__proto__` anywhere, and `constructor`
 * holding `prototype`. Model-written JSON with one is sent back to the model, or the run that
 * recorded it could not be read again.
 */

/** JSON can spell a key only literally or with `\u` escapes, so most texts skip the walk. */
export function mayNameReservedKey(raw: string): boolean {
  return raw.includes('__proto__') || raw.includes('constructor') || raw.includes('\\u');
}

/** The path to the first one, ending with its name. JSON.parse creates `__proto__` keys as own data properties. */
export function reservedKeyPath(root: unknown): readonly PropertyKey[] | undefined {
  const stack: Array<{ value: unknown; path: readonly PropertyKey[] }> = [{ value: root, path: [] }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { value, path } = next;
    if (typeof value !== 'object' || value === null) continue;
    if (!Array.isArray(value) && Object.hasOwn(value, '__proto__')) return [...path, '__proto__'];
    const made = Array.isArray(value) ? undefined : (value as Record<string, unknown>)['constructor'];
    if (Object.hasOwn(value, 'constructor') && typeof made === 'object' && made !== null && Object.hasOwn(made, 'prototype')) return [...path, 'constructor'];
    for (const [key, item] of Object.entries(value)) {
      if (typeof item === 'object' && item !== null) stack.push({ value: item, path: [...path, Array.isArray(value) ? Number(key) : key] });
    }
  }
  return undefined;
}

export const reservedKeyMessage = (path: readonly PropertyKey[]): string =>
  path.at(-1) === '__proto__' ? 'the key "__proto__" is not allowed; remove it' : 'a key "constructor" holding a key "prototype" is not allowed; rename one of them';
