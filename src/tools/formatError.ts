/**
 * Turn anything a tool threw into a short message the model can act on.
 *
 * Tools throw Errors, strings, `null`, plain objects, errors with 10 MB messages and errors whose
 * messages embed stack traces. The model needs the name and the message — never stack frames,
 * file paths of our runtime, or the `cause` chain (which may hold request objects and secrets).
 */
import { types } from 'node:util';
import { stringifyBounded } from './json.ts';
import { printable, sliceChars } from './text.ts';

// A V8 stack frame line: "    at fn (file.js:1:2)", "    at file:///x.js:3:4", "    at <anonymous>".
const STACK_FRAME = /^\s*at\s.*(?::\d+:\d+\)?|<anonymous>\)?|\(native\))\s*$/;
const MAX_AGGREGATED = 3;

function describeErrorLike(name: string, message: string, code: unknown): string {
  let text = message === '' ? `${name} (no message)` : `${name}: ${message}`;
  if ((typeof code === 'string' || typeof code === 'number') && String(code).length <= 64 && !message.includes(String(code))) {
    text += ` [code: ${String(code)}]`;
  }
  return text;
}

function stringProperty(value: object, key: string): string | undefined {
  const property: unknown = (value as Record<string, unknown>)[key];
  return typeof property === 'string' ? property : undefined;
}

/** The description, cut to about `maxChars * 2` before any regex work, and its full length. */
interface Description {
  readonly text: string;
  readonly fullLength: number;
}

function whole(text: string): Description {
  return { text, fullLength: text.length };
}

function describeThrown(error: unknown, maxChars: number): Description {
  if (error === null || error === undefined) {
    return whole(`Tool failed without an error message (threw ${String(error)})`);
  }
  if (typeof error === 'string') {
    return error === '' ? whole('Tool failed with an empty error message') : { text: sliceChars(error, maxChars * 2), fullLength: error.length };
  }
  if (typeof error !== 'object') {
    if (typeof error === 'function') return whole('Tool threw a function instead of an error');
    return whole(`Tool threw a non-error value: ${sliceChars(String(error), maxChars * 2)}`);
  }
  const message = stringProperty(error, 'message');
  const isError = error instanceof Error || types.isNativeError(error);
  if (!isError && message === undefined) {
    const prefix = 'Tool threw a non-error value: ';
    const json = stringifyBounded(error, maxChars * 2);
    // For objects the stated length is the JSON's UTF-8 size (equal to its length for ASCII).
    return { text: prefix + json.text, fullLength: prefix.length + json.totalBytes };
  }
  // Error-like: a real Error, or an object with a string `message` (errors from other realms,
  // structured clones). Bound the parts first: a message may be megabytes long.
  const name = sliceChars(stringProperty(error, 'name') || 'Error', 200);
  const fullMessage = message ?? '';
  let text = describeErrorLike(name, sliceChars(fullMessage, maxChars * 2), (error as { code?: unknown }).code);
  const fullLength = text.length + fullMessage.length - Math.min(fullMessage.length, maxChars * 2);
  if (error instanceof AggregateError && Array.isArray(error.errors) && error.errors.length > 0) {
    const inner = error.errors.slice(0, MAX_AGGREGATED).map((item: unknown) => sliceChars(describeThrown(item, 200).text, 200));
    const more = error.errors.length > MAX_AGGREGATED ? `; and ${error.errors.length - MAX_AGGREGATED} more` : '';
    text += ` (${error.errors.length} errors: ${inner.join('; ')}${more})`;
  }
  return { text, fullLength: Math.max(fullLength, text.length) };
}

/**
 * A sanitised message for the model from any thrown value, at most `maxChars` characters.
 *
 * `Error` → `Name: message` (plus `[code: X]` when the error has a short code the message does
 * not mention); a string as is; `null`/`undefined` → `Tool failed without an error message
 * (threw null)`; other values → `Tool threw a non-error value: <bounded JSON>`. Stack frames
 * (also ones embedded in messages), ANSI colours, control characters and lone surrogates are
 * removed; the `cause` chain is never read. Never throws.
 *
 * @example
 * ```ts
 * formatToolError(new TypeError('bad input')); // 'TypeError: bad input'
 * formatToolError(null); // 'Tool failed without an error message (threw null)'
 * formatToolError({ status: 500 }); // 'Tool threw a non-error value: {"status":500}'
 * ```
 */
export function formatToolError(error: unknown, maxChars = 2000): string {
  const limit = maxChars >= 0 ? Math.floor(maxChars) : 2000;
  let description: Description;
  try {
    description = describeThrown(error, limit);
  } catch {
    // A hostile getter or Proxy; the model still learns that the tool failed.
    return sliceChars('Tool failed with an error that could not be described', limit);
  }
  const clean = printable(
    sliceChars(description.text, limit * 2)
      .split('\n')
      .filter((line) => !STACK_FRAME.test(line))
      .join('\n'),
  )
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  if (clean === '') return sliceChars('Tool failed with an empty error message', limit);
  if (clean.length <= limit && description.fullLength <= limit * 2) return clean;
  const suffix = ` … [truncated, ${description.fullLength} chars]`;
  return sliceChars(clean, Math.max(0, limit - suffix.length)) + suffix;
}
