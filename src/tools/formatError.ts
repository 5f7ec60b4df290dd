/** The model needs name and message: never stack frames, our file paths, or the `cause` chain (it may hold secrets). */
import { types } from 'node:util';
import { stringifyBounded } from './json.ts';
import { printable, sliceChars } from './text.ts';

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

/** Cut before any regex work: a message may be megabytes long. */
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
    return { text: prefix + json.text, fullLength: prefix.length + json.totalBytes };
  }
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

/** Never throws; strips stack frames (also inside messages), ANSI and control characters. */
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
