/**
 * JSON for arbitrary tool results that never throws and stops emitting at the budget, only counting
 * the rest: `JSON.stringify` throws on cycles and BigInt and expands a nested Buffer byte by byte.
 */
import { binaryBytes, describeBinary } from './binary.ts';
import { jsonStringBytes } from './text.ts';

/** The writer recurses; this bounds the stack. */
const MAX_DEPTH = 100;
const MAX_NODES = 1_000_000;

export interface BoundedJson {
  /** All of it whenever `totalBytes < maxChars`: a code unit is at least one UTF-8 byte. */
  readonly text: string;
  readonly totalBytes: number;
  /** False when counting stopped (after about a million values) and `totalBytes` is a lower bound. */
  readonly exact: boolean;
}

const OMIT = Symbol('omit');
const STOP = Symbol('stop');

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

  private member(key: string, item: unknown, first: boolean, depth: number): boolean | typeof STOP {
    if (item === OMIT) return false;
    if (!first) this.ascii(',');
    this.string(key);
    this.ascii(':');
    return this.write(item, depth) === STOP ? STOP : true;
  }
}

/** A top-level `undefined`, function or symbol is written as `null`; callers that mean otherwise handle them first. */
export function stringifyBounded(value: unknown, maxChars: number): BoundedJson {
  const writer = new BoundedWriter(maxChars);
  const normalized = writer.normalize(value, '');
  writer.write(normalized === OMIT ? null : normalized, 0);
  return { text: writer.text, totalBytes: writer.totalBytes, exact: writer.exact };
}
