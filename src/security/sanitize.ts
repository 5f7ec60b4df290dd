/**
 * JSON-safe data that may leave the process. `__proto__` keys are dropped, so a consumer's `Object.assign(target, out)`
 * cannot replace a prototype; it never throws (an unreadable getter or `toJSON` becomes `'[Unreadable]'`).
 */
import { ConfigurationError } from '../core/errors.ts';
import { sliceChars } from '../tools/text.ts';
import { compileSecretRules, type SecretRuleOptions } from './secrets.ts';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export interface SanitizeOptions extends SecretRuleOptions {
  /** Strings longer than this many UTF-16 code units are cut, with a marker. Default 4096. */
  readonly maxStringLength?: number;
  readonly maxDepth?: number;
}

export const SANITIZE_DEFAULTS = { maxStringLength: 4096, maxDepth: 64 } as const;

// Redaction runs on this much past the cut, so a secret straddling the cut is still recognised.
const REDACT_MARGIN = 1024;

export type Sanitizer = (value: unknown) => JsonValue;

/** Compiles the rules once, for many values (one per inspection event). */
export function createSanitizer(options: SanitizeOptions = {}): Sanitizer {
  const maxStringLength = options.maxStringLength ?? SANITIZE_DEFAULTS.maxStringLength;
  const maxDepth = options.maxDepth ?? SANITIZE_DEFAULTS.maxDepth;
  if (!Number.isInteger(maxStringLength) || maxStringLength < 16) {
    throw new ConfigurationError(`sanitize: maxStringLength must be an integer of at least 16, got ${String(maxStringLength)}.`);
  }
  if (!Number.isInteger(maxDepth) || maxDepth < 1) {
    throw new ConfigurationError(`sanitize: maxDepth must be a positive integer, got ${String(maxDepth)}.`);
  }
  const rules = compileSecretRules(options);
  const replacement = options.replacement ?? '[REDACTED]';

  const cleanString = (text: string): string => {
    if (text.length <= maxStringLength) return rules.redactText(text);
    const redacted = rules.redactText(text.slice(0, maxStringLength + REDACT_MARGIN));
    const kept = sliceChars(redacted, maxStringLength);
    return `${kept}…[truncated ${text.length - kept.length} chars]`;
  };

  const walk = (value: unknown, depth: number, ancestors: Set<object>, done: WeakMap<object, JsonValue>): JsonValue | undefined => {
    switch (typeof value) {
      case 'string':
        return cleanString(value);
      case 'number':
        // -0 would read back as 0 anyway; NaN and ±Infinity as null, as JSON writes them.
        return Number.isFinite(value) ? value + 0 : null;
      case 'boolean':
        return value;
      case 'bigint':
        return value.toString();
      case 'undefined':
      case 'function':
      case 'symbol':
        return undefined;
    }
    if (value === null) return null;
    const object = value as object;
    if (ancestors.has(object)) return '[Circular]';
    const seen = done.get(object);
    if (seen !== undefined) return seen;
    if (depth >= maxDepth) return '[MaxDepth]';
    ancestors.add(object);
    let out: JsonValue | undefined;
    try {
      out = walkObject(object, depth, ancestors, done);
    } catch {
      out = '[Unreadable]';
    } finally {
      ancestors.delete(object);
    }
    if (out !== undefined) done.set(object, out);
    return out;
  };

  const walkObject = (object: object, depth: number, ancestors: Set<object>, done: WeakMap<object, JsonValue>): JsonValue | undefined => {
    const toJSON: unknown = (object as { toJSON?: unknown }).toJSON;
    // As JSON.stringify does: Dates, XState actors and snapshots, ActorloopErrors define toJSON.
    if (typeof toJSON === 'function') {
      const json: unknown = toJSON.call(object, '');
      // `toJSON() { return this }` would otherwise read as a cycle: walk the object itself.
      if (json !== object) return walk(json, depth + 1, ancestors, done);
    }
    // Array.from, not map: map keeps a sparse array's holes, which JSON writes as null anyway.
    if (Array.isArray(object)) return Array.from(object as unknown[], (item) => walk(item, depth + 1, ancestors, done) ?? null);
    if (ArrayBuffer.isView(object)) return `[Binary ${object.byteLength} bytes]`;
    if (object instanceof ArrayBuffer) return `[Binary ${object.byteLength} bytes]`;
    if (object instanceof Map) return [...object].map((entry) => walk(entry, depth + 1, ancestors, done) ?? null);
    if (object instanceof Set) return [...object].map((item: unknown) => walk(item, depth + 1, ancestors, done) ?? null);
    if (object instanceof RegExp) return cleanString(String(object));
    const source: Record<string, unknown> = object instanceof Error ? errorFields(object) : (object as Record<string, unknown>);
    const out: { [key: string]: JsonValue } = {};
    for (const key of Object.keys(source)) {
      if (key === '__proto__') continue;
      const cleanKey = cleanString(key);
      if (cleanKey === '__proto__') continue;
      let item: unknown;
      try {
        item = source[key];
      } catch {
        out[cleanKey] = '[Unreadable]';
        continue;
      }
      if (item === undefined) continue;
      if (rules.isSecretKey(key)) {
        out[cleanKey] = replacement;
        continue;
      }
      const cleaned = walk(item, depth + 1, ancestors, done);
      if (cleaned !== undefined) out[cleanKey] = cleaned;
    }
    return out;
  };

  return (value: unknown): JsonValue => {
    try {
      return walk(value, 0, new Set(), new WeakMap()) ?? null;
    } catch {
      // Only a stack overflow gets here (maxDepth set very high): still never throw.
      return '[Unreadable]';
    }
  };
}

/**
 * An Error's message and name are not enumerable, so JSON would drop them; the stack is left
 * out (it repeats the message and leaks paths).
 */
function errorFields(error: Error): Record<string, unknown> {
  const fields: Record<string, unknown> = { name: error.name, message: error.message };
  for (const key of Object.keys(error)) {
    if (key === 'stack' || key === '__proto__') continue;
    try {
      fields[key] = (error as unknown as Record<string, unknown>)[key];
    } catch {
      fields[key] = '[Unreadable]';
    }
  }
  if (error.cause !== undefined) fields['cause'] = error.cause;
  return fields;
}

/**
 * Options add to the default secret rules, never remove them; {@link createSanitizer} compiles them once for many values.
 * @example
 * ```ts
 * sanitize({ headers: { Authorization: 'Bearer abc' } }); // { headers: { Authorization: '[REDACTED]' } }
 * ```
 */
export function sanitize(value: unknown, options?: SanitizeOptions): JsonValue {
  return createSanitizer(options)(value);
}
