/**
 * Turn whatever a tool returned into the bounded, well-formed text the model sees. The same
 * string goes into the conversation, the journal and events, so truncation happens here, once,
 * before any of them.
 */
import { DEFAULTS } from '../core/defaults.ts';
import { ConfigurationError } from '../core/errors.ts';
import { BINARY_PREVIEW_BYTES, binaryBytes, describeBinary, textPrefix } from './binary.ts';
import { stringifyBounded } from './json.ts';
import { toWellFormed, utf8PrefixLength } from './text.ts';

// Errors become observations too; kept next to results for callers that import both from here.
export { formatToolError } from './formatError.ts';

/** A tool result as model-facing text. */
export interface SerializedToolResult {
  /** At most `maxBytes` UTF-8 bytes (marker included), free of lone surrogates. */
  readonly content: string;
  /** True when `content` does not hold the whole result (cut, or binary shown as a description). */
  readonly truncated: boolean;
  /** UTF-8 size of the full serialisation (the byte length for binary values). */
  readonly originalBytes: number;
}

/**
 * The marker appended to truncated content. ASCII, so its length is its byte count.
 *
 * @example
 * ```ts
 * truncationMarker(65_500, 10_485_760); // '\n[truncated: showing 65500 of 10485760 bytes]'
 * ```
 */
export function truncationMarker(shownBytes: number, originalBytes: number, exact = true): string {
  return `\n[truncated: showing ${shownBytes} of ${exact ? '' : 'at least '}${originalBytes} bytes]`;
}

/** Keep a UTF-8 prefix of `text` so that prefix + marker fit in `maxBytes`. */
function fit(text: string, originalBytes: number, maxBytes: number, exact = true): SerializedToolResult {
  if (exact && originalBytes <= maxBytes) return { content: toWellFormed(text), truncated: false, originalBytes };
  // The marker for `maxBytes` shown bytes is the longest it can get (same or more digits).
  const keep = Math.max(0, maxBytes - truncationMarker(maxBytes, originalBytes, exact).length);
  const head = toWellFormed(text.slice(0, utf8PrefixLength(text, keep)));
  const shown = Buffer.byteLength(head);
  return { content: head + truncationMarker(shown, originalBytes, exact), truncated: true, originalBytes };
}

function serializeBinary(bytes: Uint8Array, maxBytes: number): SerializedToolResult {
  const text = textPrefix(bytes, maxBytes);
  if (text !== undefined) return fit(text, bytes.byteLength, maxBytes);
  const description = describeBinary(bytes);
  const shown = fit(description, description.length, maxBytes);
  return {
    content: shown.content,
    truncated: shown.truncated || bytes.byteLength > BINARY_PREVIEW_BYTES,
    originalBytes: bytes.byteLength,
  };
}

/**
 * Serialise a tool's return value for the model, bounded to `maxBytes` UTF-8 bytes.
 *
 * - strings as they are; numbers, booleans and bigints with `String`;
 * - `undefined` (a tool that returns nothing) → `''`: "no output" is what it means, and the
 *   executor may add its own wording; `null` → `'null'` like any other JSON value;
 * - binary (Buffer, typed arrays, ArrayBuffer): as text when the bytes are UTF-8 text, else a
 *   description `[binary: N bytes, <type>; first 32 bytes as hex: …]`;
 * - everything else as compact JSON that tolerates cycles, BigInt, Map/Set, Errors and throwing
 *   getters (see `stringifyBounded`); this function never throws for any value.
 *
 * Over budget, the content is cut on a character boundary and ends with
 * `\n[truncated: showing K of N bytes]`; the marker counts inside `maxBytes` (budgets smaller
 * than the marker, about 50 bytes, yield the marker alone). Lone surrogates become U+FFFD.
 * Memory stays bounded: a 10 MB string is measured, not copied; a 10 MB buffer is read only up
 * to the budget; objects are serialised only up to the budget and the rest is counted.
 *
 * @example
 * ```ts
 * serializeToolResult({ sum: 3 }).content; // '{"sum":3}'
 * const big = serializeToolResult('x'.repeat(10 * 1024 * 1024));
 * big.truncated; // true — big.content ends with '[truncated: showing 65488 of 10485760 bytes]'
 * ```
 */
export function serializeToolResult(
  value: unknown,
  maxBytes: number = DEFAULTS.tools.maxResultBytes,
): SerializedToolResult {
  if (!(maxBytes >= 0)) {
    throw new ConfigurationError(`maxBytes must be a number >= 0 (got ${String(maxBytes)}); the default is ${DEFAULTS.tools.maxResultBytes}.`);
  }
  const budget = Math.floor(maxBytes);
  try {
    return serializeValue(value, budget);
  } catch (error) {
    // Only exotic values get here (a revoked Proxy fails even `instanceof`); describe, never throw.
    const text = `[unserializable ${typeof value}: ${error instanceof Error ? error.name : 'unknown error'}]`;
    return fit(text, text.length, budget);
  }
}

function serializeValue(value: unknown, budget: number): SerializedToolResult {
  switch (typeof value) {
    case 'string':
      // Buffer.byteLength measures without encoding a copy (lone surrogates count as U+FFFD).
      return fit(value, Buffer.byteLength(value), budget);
    case 'undefined':
      return { content: '', truncated: false, originalBytes: 0 };
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'symbol': {
      const text = String(value);
      return fit(text, Buffer.byteLength(text), budget);
    }
    case 'function': {
      const text = `[function ${value.name === '' ? 'anonymous' : value.name}]`;
      return fit(text, Buffer.byteLength(text), budget);
    }
    default: {
      const bytes = binaryBytes(value);
      if (bytes !== undefined) return serializeBinary(bytes, budget);
      const json = stringifyBounded(value, budget + 1);
      return fit(json.text, json.totalBytes, budget, json.exact);
    }
  }
}
