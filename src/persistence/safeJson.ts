/**
 * Refuses keys that could pollute prototypes, by secure-json-parse's rule: `__proto__` anywhere, and
 * `constructor` carrying `prototype`. A plain `prototype` or `constructor` key is ordinary data.
 */

export type SafeParseJson = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

const ASCII_LETTER_ESCAPE = /\\u00[4-7][0-9a-fA-F]/;

export function safeJsonParse(text: string): SafeParseJson {
  // Either key can appear only spelled out or with escapes of ASCII letters and `_`; without those the slow reviver
  // has nothing to find. Other escapes (a NUL separator, half a surrogate pair) are common and cannot spell them.
  if (!text.includes('__proto__') && !text.includes('constructor') && !ASCII_LETTER_ESCAPE.test(text)) {
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
