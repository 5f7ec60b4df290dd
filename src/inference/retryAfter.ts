/** Apart from the retry loop: errors are classified (and the hint captured) long before anyone sleeps on it. */

export interface HeaderReader {
  get(name: string): string | null | undefined;
}

/** `retry-after-ms` (OpenAI, Azure) wins over `retry-after` (seconds or an HTTP date); a past date means 0. */
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
