/**
 * Reading a server's "wait this long before trying again" hint. Kept apart from the retry loop
 * because errors are classified (and the hint captured) long before anyone sleeps on it.
 */

/** Anything with a `get(name)` like the Fetch `Headers` class. */
export interface HeaderReader {
  get(name: string): string | null | undefined;
}

/**
 * The delay a response asks for, in ms: `retry-after-ms` (non-standard, sent by OpenAI and
 * Azure, more precise) wins over `retry-after`, which is either delta-seconds (fractions
 * accepted) or an HTTP date. Returns `undefined` when there is no usable hint; a date in the
 * past means "now" (0).
 *
 * @example
 * ```ts
 * parseRetryAfter(new Headers({ 'retry-after': '2' }));         // 2000
 * parseRetryAfter(new Headers({ 'retry-after-ms': '20' }));     // 20
 * parseRetryAfter(new Headers({ 'retry-after': 'Wed, 21 Oct 2015 07:28:10 GMT' }),
 *                 Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')); // 10000
 * ```
 */
export function parseRetryAfter(headers: HeaderReader | undefined, now: number = Date.now()): number | undefined {
  if (headers === undefined) return undefined;
  const ms = parseNonNegative(headers.get('retry-after-ms'));
  if (ms !== undefined) return Math.round(ms);
  const raw = headers.get('retry-after')?.trim();
  if (raw === undefined || raw === '') return undefined;
  const seconds = parseNonNegative(raw);
  if (seconds !== undefined) return Math.round(seconds * 1000);
  // HTTP dates (IMF-fixdate, RFC 850, asctime) all start with a weekday; V8's Date.parse would
  // otherwise read "-5" as a year.
  if (!/^[A-Za-z]{3}/.test(raw)) return undefined;
  const date = Date.parse(raw);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

function parseNonNegative(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  // Number('') is 0 and Number('1e3') is 1000; only plain decimals count as a delay.
  if (!/^\d+(\.\d+)?$/.test(trimmed)) return undefined;
  const parsed = Number(trimmed);
  return Number.isFinite(parsed) ? parsed : undefined;
}
