/**
 * JSON parsing for persisted data: keys that could pollute prototypes are refused before any
 * value reaches the program.
 */

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export type SafeParseJson = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

/**
 * Parse JSON, refusing `__proto__` (and `constructor`/`prototype` holding objects) anywhere.
 *
 * @example
 * ```ts
 * safeJsonParse('{"__proto__":{"x":1}}'); // { ok: false, reason: 'forbidden key "__proto__"' }
 * ```
 */
export function safeJsonParse(text: string): SafeParseJson {
  let forbidden: string | undefined;
  let value: unknown;
  try {
    value = JSON.parse(text, function (this: unknown, key: string, v: unknown) {
      if (key === '__proto__' || (FORBIDDEN_KEYS.has(key) && v !== null && typeof v === 'object')) forbidden ??= key;
      return v;
    });
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : 'invalid JSON' };
  }
  if (forbidden !== undefined) return { ok: false, reason: `forbidden key "${forbidden}"` };
  return { ok: true, value };
}
