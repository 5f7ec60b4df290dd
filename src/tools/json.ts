/**
 * A JSON serialiser for arbitrary tool results that never throws and never builds more text than
 * the budget needs.
 *
 * `JSON.stringify` throws on cycles and BigInt, turns a nested Buffer into an array
 * of one number per byte (several times its size as text), and always builds the whole string. This writer
 * emits the same compact JSON for ordinary data, stops *emitting* once the budget is reached and
 * only *counts* the rest (so the truncation marker can state the original size), and renders
 * the awkward cases as data: cycles → `"[Circular]"`, BigInt → its digits, binary →
 * a description, Map → object, Set → array, Error → `{ name, message }`, throwing getters and
 * `toJSON` → a description of the failure.
 *
 * Internal to `src/tools/`; not re-exported from the package.
 */
import { binaryBytes, describeBinary } from './binary.ts';
import { jsonStringBytes } from './text.ts';

/** Deeper values are rendered as `"[Max depth]"` (the writer recurses; this bounds the stack). */
const MAX_DEPTH = 100;
/** After this many values the writer stops even counting; `totalBytes` is then a lower bound. */
const MAX_NODES = 1_000_000;

export interface BoundedJson {
  /**
   * The start of the serialisation, cut at `maxChars` code units: all of it whenever
   * `totalBytes < maxChars` (a code unit is at least one UTF-8 byte).
   */
  readonly text: string;
  /** UTF-8 bytes of the whole serialisation; a lower bound when `exact` is false. */
  readonly totalBytes: number;
  /** False when the value was so large that counting stopped (after about a million values). */
  readonly exact: boolean;
}

const OMIT = Symbol('omit');
const STOP = Symbol('stop');

/** Short description of an error thrown while reading a value (bounded: the message may be huge). */
function errorMessage(error: unknown): string {
  try {
    return (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).slice(0, 200);
  } catch {
    return 'unknown error';
  }
}

class BoundedWriter {
  private readonly parts: string[] = [];
  private emitted = 0;
  private nodes = 0;
  private readonly ancestors = new Set<object>();
  totalBytes = 0;
  exact = true;

  constructor(private readonly maxChars: number) {}

  get text(): string {
    return this.parts.join('');
  }

  /** Append ASCII text (punctuation, numbers, literals): its length is its byte count. */
  private ascii(text: string): undefined {
    this.totalBytes += text.length;
    if (this.emitted < this.maxChars) this.emit(text);
  }

  private emit(text: string): void {
    const room = this.maxChars - this.emitted;
    if (room <= 0) return;
    const piece = text.length > room ? text.slice(0, room) : text;
    this.parts.push(piece);
    this.emitted += piece.length;
  }

  private string(value: string): undefined {
    const room = this.maxChars - this.emitted;
    if (room <= 0) {
      this.totalBytes += jsonStringBytes(value);
    } else if (value.length <= room) {
      const escaped = JSON.stringify(value);
      this.totalBytes += Buffer.byteLength(escaped);
      this.emit(escaped);
    } else {
      // Escape only the part that can still be shown; count the whole without copying it.
      this.emit(JSON.stringify(value.slice(0, room)));
      this.totalBytes += jsonStringBytes(value);
    }
  }

  /** What `JSON.stringify` would serialise for `value` under `key` (after `toJSON`), or OMIT. */
  normalize(value: unknown, key: string): unknown {
    if (typeof value !== 'object' || value === null) {
      return typeof value === 'function' || typeof value === 'symbol' || value === undefined ? OMIT : value;
    }
    let current: unknown = value;
    // Binary first: Buffer#toJSON would expand every byte into a number.
    let bytes = binaryBytes(current);
    if (bytes === undefined) {
      try {
        const toJSON: unknown = (current as { toJSON?: unknown }).toJSON;
        if (typeof toJSON === 'function') current = toJSON.call(current, key);
      } catch (error) {
        return `[toJSON threw: ${errorMessage(error)}]`;
      }
      bytes = binaryBytes(current);
    }
    if (bytes !== undefined) return describeBinary(bytes);
    if (typeof current === 'function' || typeof current === 'symbol' || current === undefined) return OMIT;
    if (current instanceof Number || current instanceof String || current instanceof Boolean) return current.valueOf();
    return current;
  }

  /** Write one normalised value; returns STOP once the node budget is spent past the text budget. */
  write(value: unknown, depth: number): typeof STOP | undefined {
    if (++this.nodes > MAX_NODES && this.emitted >= this.maxChars) {
      this.exact = false;
      return STOP;
    }
    if (typeof value === 'string') return this.string(value);
    if (typeof value === 'number') return this.ascii(Number.isFinite(value) ? String(value) : 'null');
    // BigInt as its digits: valid JSON number text, exact for the reader.
    if (typeof value === 'boolean' || typeof value === 'bigint') return this.ascii(String(value));
    if (typeof value !== 'object' || value === null) return this.ascii('null');
    if (this.ancestors.has(value)) return this.string('[Circular]');
    if (depth >= MAX_DEPTH) return this.string('[Max depth]');
    this.ancestors.add(value);
    try {
      if (Array.isArray(value)) return this.array(value, depth + 1);
      if (value instanceof Set) return this.array([...value], depth + 1);
      if (value instanceof Map) return this.map(value, depth + 1);
      if (value instanceof Error) return this.object({ name: value.name, message: value.message }, depth + 1);
      return this.object(value, depth + 1);
    } catch (error) {
      // A Proxy or exotic object refused to be read; say so instead of failing the whole result.
      return this.string(`[Unserializable: ${errorMessage(error)}]`);
    } finally {
      this.ancestors.delete(value);
    }
  }

  private array(items: readonly unknown[], depth: number): typeof STOP | undefined {
    this.ascii('[');
    // Index by index like JSON.stringify: holes in sparse arrays become null.
    for (let index = 0; index < items.length; index += 1) {
      if (index > 0) this.ascii(',');
      const item = this.normalize(items[index], String(index));
      if (this.write(item === OMIT ? null : item, depth) === STOP) return STOP;
    }
    this.ascii(']');
    return undefined;
  }

  private object(object: object, depth: number): typeof STOP | undefined {
    this.ascii('{');
    let first = true;
    for (const key of Object.keys(object)) {
      let item: unknown;
      try {
        item = this.normalize((object as Record<string, unknown>)[key], key);
      } catch (error) {
        item = `[Unreadable: ${errorMessage(error)}]`;
      }
      const written = this.member(key, item, first, depth);
      if (written === STOP) return STOP;
      first &&= !written;
    }
    this.ascii('}');
    return undefined;
  }

  /** A Map as an object with stringified keys, in insertion order. */
  private map(map: ReadonlyMap<unknown, unknown>, depth: number): typeof STOP | undefined {
    this.ascii('{');
    let first = true;
    for (const [rawKey, rawItem] of map) {
      const key = String(rawKey);
      const written = this.member(key, this.normalize(rawItem, key), first, depth);
      if (written === STOP) return STOP;
      first &&= !written;
    }
    this.ascii('}');
    return undefined;
  }

  /** Write `,"key":value` (nothing for an omitted value); true when something was written. */
  private member(key: string, item: unknown, first: boolean, depth: number): boolean | typeof STOP {
    if (item === OMIT) return false;
    if (!first) this.ascii(',');
    this.string(key);
    this.ascii(':');
    return this.write(item, depth) === STOP ? STOP : true;
  }
}

/**
 * Serialise `value` as compact JSON, emitting about `maxChars` code units at most and counting
 * the UTF-8 size of the rest. A top-level `undefined`, function or symbol is written as `null`
 * (callers that give those another meaning handle them first).
 *
 * @example
 * ```ts
 * const cyclic: { self?: unknown } = {}; cyclic.self = cyclic;
 * stringifyBounded({ n: 1n, cyclic }, 1024).text; // '{"n":1,"cyclic":{"self":"[Circular]"}}'
 * ```
 */
export function stringifyBounded(value: unknown, maxChars: number): BoundedJson {
  const writer = new BoundedWriter(maxChars);
  const normalized = writer.normalize(value, '');
  writer.write(normalized === OMIT ? null : normalized, 0);
  return { text: writer.text, totalBytes: writer.totalBytes, exact: writer.exact };
}
