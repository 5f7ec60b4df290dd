/**
 * UTF-16 / UTF-8 helpers for bounding what tools hand to the model.
 *
 * JavaScript strings are UTF-16 and may hold lone surrogates (half of an emoji, garbage from a
 * bad decoder). Those serialise to invalid UTF-8 or to `\udXXX` escapes that some providers
 * reject, so every string that leaves the tool layer goes through {@link toWellFormed}. Budgets
 * are in UTF-8 bytes because that is what journals, events and HTTP bodies pay for.
 *
 * Internal to `src/tools/`; not re-exported from the package.
 */

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Replace every lone surrogate with U+FFFD, like ES2024 `String.prototype.toWellFormed`.
 * Call it on already-bounded text: it copies the string.
 *
 * @example
 * ```ts
 * toWellFormed('a\uD83D'); // 'a\uFFFD'
 * ```
 */
export function toWellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLow(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * Length (in UTF-16 code units) of the longest prefix of `text` whose UTF-8 encoding fits in
 * `maxBytes`, never ending between the two halves of a surrogate pair. Lone surrogates count 3
 * bytes, the size of the U+FFFD that replaces them. Reads at most `maxBytes` code units, so the
 * work is bounded by the budget, not the string.
 *
 * @example
 * ```ts
 * utf8PrefixLength('aé😀', 4); // 2 — 'aé' is 3 bytes; the emoji (4 bytes) does not fit
 * ```
 */
export function utf8PrefixLength(text: string, maxBytes: number): number {
  let bytes = 0;
  let index = 0;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    let width: number;
    let units = 1;
    if (code < 0x80) width = 1;
    else if (code < 0x800) width = 2;
    else if (isHigh(code) && index + 1 < text.length && isLow(text.charCodeAt(index + 1))) {
      width = 4;
      units = 2;
    } else width = 3;
    if (bytes + width > maxBytes) break;
    bytes += width;
    index += units;
  }
  return index;
}

/**
 * Cut `text` to at most `maxChars` UTF-16 code units without splitting a surrogate pair.
 *
 * @example
 * ```ts
 * sliceChars('ab😀', 3); // 'ab' — the emoji takes two code units
 * ```
 */
export function sliceChars(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = Math.max(0, maxChars);
  if (end > 0 && isHigh(text.charCodeAt(end - 1)) && isLow(text.charCodeAt(end))) end -= 1;
  return text.slice(0, end);
}

/**
 * UTF-8 byte length of `JSON.stringify(text)` (quotes and escapes included), computed without
 * building the escaped copy — used to report the original size of huge values cheaply.
 *
 * @example
 * ```ts
 * jsonStringBytes('a"b'); // 6 — "a\"b"
 * ```
 */
export function jsonStringBytes(text: string): number {
  let bytes = 2;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code === 0x22 || code === 0x5c) bytes += 2;
    else if (code < 0x20) bytes += code === 8 || code === 9 || code === 10 || code === 12 || code === 13 ? 2 : 6;
    else if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (isHigh(code) && index + 1 < text.length && isLow(text.charCodeAt(index + 1))) {
      bytes += 4;
      index += 1;
    } else if (isHigh(code) || isLow(code)) bytes += 6; // JSON.stringify escapes lone surrogates as \udXXX
    else bytes += 3;
  }
  return bytes;
}

// Matching control characters is the point of these two patterns.
// eslint-disable-next-line no-control-regex
const ANSI_ESCAPE = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;
// C0 controls except \t and \n, DEL, and C1 controls: invisible to readers, confusing to models.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Make model-facing text printable: drop ANSI colour codes, turn other control characters into
 * spaces, replace lone surrogates. Keeps `\n` and `\t`.
 *
 * @example
 * ```ts
 * printable('\u001b[31mred\u001b[0m\u0000!'); // 'red !'
 * ```
 */
export function printable(text: string): string {
  return toWellFormed(text.replace(ANSI_ESCAPE, '').replace(CONTROL, ' '));
}

/**
 * A name that came from the model (a tool name, an object key), made safe to quote in an
 * observation or a log: at most `maxChars` code units (`…` marks a cut), well-formed, and
 * JSON-quoted so control characters and quotes are escaped.
 *
 * @example
 * ```ts
 * quoteUntrusted('a"b\n'); // '"a\\"b\\n"'
 * ```
 */
export function quoteUntrusted(text: string, maxChars = 64): string {
  const cut = sliceChars(text, maxChars);
  return JSON.stringify(toWellFormed(cut.length < text.length ? `${cut}…` : cut));
}
