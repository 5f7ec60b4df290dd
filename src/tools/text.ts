/** Every string leaving the tool layer goes through {@link toWellFormed}: lone surrogates break UTF-8 and some providers. */

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Call it on already-bounded text: it copies the string. */
export function toWellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLow(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Lone surrogates count 3 bytes, the size of the U+FFFD that replaces them; reads at most `maxBytes` code units. */
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

export function sliceChars(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let end = Math.max(0, maxChars);
  if (end > 0 && isHigh(text.charCodeAt(end - 1)) && isLow(text.charCodeAt(end))) end -= 1;
  return text.slice(0, end);
}

/** Without building the escaped copy, so huge values are measured cheaply. */
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

// eslint-disable-next-line no-control-regex
const ANSI_ESCAPE = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;
// C0 and C1 controls except \t and \n: invisible to readers, confusing to models.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export function printable(text: string): string {
  return toWellFormed(text.replace(ANSI_ESCAPE, '').replace(CONTROL, ' '));
}

/** Model output quoted in an observation or a log: cut, well-formed and JSON-escaped. */
export function quoteUntrusted(text: string, maxChars = 64): string {
  const cut = sliceChars(text, maxChars);
  return JSON.stringify(toWellFormed(cut.length < text.length ? `${cut}…` : cut));
}
