/**
 * JSON parsing for persisted data: keys that could pollute prototypes are refused before any
 * value reaches the program. The rule is secure-json-parse's: `__proto__` anywhere, and a
 * `constructor` object carrying a `prototype` — the path a later deep merge would follow. A
 * plain `prototype` or `constructor` key is ordinary data (a tool argument may be called that)
 * and refusing it would make a run's own log unreadable.
 */

export type SafeParseJson = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

/**
 * Parse JSON, refusing `__proto__` and `constructor.prototype` anywhere.
 *
 * @example
 * ```ts
 * safeJsonParse('{"__proto__":{"x":1}}'); // { ok: false, reason: 'forbidden key "__proto__"' }
 * ```
 */
export function safeJsonParse(text: string): SafeParseJson {
  // Text can hold either key only by spelling it out, or some of it as \u escapes (no other
  // escape gives a letter or an underscore). Without those the reviver, a slow path, has nothing
  // to find.
  if (!text.includes('__proto__') && !text.includes('constructor') && !text.includes('\\u')) {
    try {
      return { ok: true, value: JSON.parse(text) as unknown };
    } catch (error) {
      return { ok: false, reason: error instanceof Error ? error.message : 'invalid JSON' };
    }
  }
  let forbidden: string | undefined;
  let value: unknown;
  try {
    value = JSON.parse(text, function (this: unknown, key: string, v: unknown) {
      if (key === '__proto__' || (key === 'constructor' && v !== null && typeof v === 'object' && Object.hasOwn(v, 'prototype'))) {
        forbidden ??= key;
      }
      return v;
    });
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : 'invalid JSON' };
  }
  if (forbidden !== undefined) return { ok: false, reason: `forbidden key "${forbidden}"` };
  return { ok: true, value };
}
