/** The same string goes into the conversation, the journal and events, so truncation happens here, once. */
import { DEFAULTS } from '../core/defaults.ts';
import { ConfigurationError } from '../core/errors.ts';
import { BINARY_PREVIEW_BYTES, binaryBytes, describeBinary, textPrefix } from './binary.ts';
import { stringifyBounded } from './json.ts';
import { toWellFormed, utf8PrefixLength } from './text.ts';

export { formatToolError } from './formatError.ts';

export interface SerializedToolResult {
  /** At most `maxBytes` UTF-8 bytes (marker included), free of lone surrogates. */
  readonly content: string;
  readonly truncated: boolean;
  readonly originalBytes: number;
}

export function truncationMarker(shownBytes: number, originalBytes: number, exact = true): string {
  return `\n[truncated: showing ${shownBytes} of ${exact ? '' : 'at least '}${originalBytes} bytes]`;
}

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
 * Never throws. `undefined` becomes `''` ("no output"); the truncation marker counts inside
 * `maxBytes`; huge strings and buffers are measured, not copied.
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
