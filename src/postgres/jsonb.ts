/**
 * PostgreSQL's jsonb holds neither a NUL character nor half a surrogate pair, and refuses the whole
 * statement for one: each becomes U+FFFD (what a UTF-8 encoder makes of the latter), in keys too.
 */
import { toWellFormed } from '../tools/text.ts';

/** For a text column, which holds no NUL either. */
export const storableText = (text: string): string => toWellFormed(text).replaceAll('\u0000', '\uFFFD');

function storable(_key: string, value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (keys.every((key) => storableText(key) === key)) return value;
  // Built with defineProperty: an argument named "__proto__" stays an own key.
  const fixed: Record<string, unknown> = {};
  for (const key of keys) Object.defineProperty(fixed, storableText(key), { value: (value as Record<string, unknown>)[key], enumerable: true, writable: true, configurable: true });
  return fixed;
}

/**
 * JSON text has each of them escaped (`\u0000`, `\udc00`): text without such an escape needs no
 * replacer. A string that holds such an escape as text is only sent the slow way, unchanged.
 */
const UNSTORABLE_ESCAPE = /\\u(?:0000|d[89a-f])/i;

/** The JSON a jsonb column takes. */
export function jsonbText(value: unknown): string {
  const json = JSON.stringify(value ?? null);
  return UNSTORABLE_ESCAPE.test(json) ? JSON.stringify(value ?? null, storable) : json;
}

/** As a jsonb column gives it back: what a run in this process sees is what a rebuilt one reads. */
export function asStored<T>(value: T): T {
  return JSON.parse(jsonbText(value)) as T;
}
