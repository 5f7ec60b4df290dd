/**
 * Bytes from the outside (a file, an HTTP body) as model-facing text: cut cleanly at a UTF-8
 * character boundary, printable, or described when they are not text at all.
 */
import { describeBinary, textPrefix } from '../binary.ts';
import { printable } from '../text.ts';

/**
 * Drop an incomplete UTF-8 sequence that a byte cap left at the end, so a cut never shows as a
 * replacement character or makes valid text look binary.
 *
 * @example
 * ```ts
 * completeUtf8(Buffer.from('aé').subarray(0, 2)).toString(); // 'a'
 * ```
 */
export function completeUtf8(bytes: Buffer): Buffer {
  let start = bytes.length - 1;
  while (start >= 0 && bytes.length - start < 4 && (bytes[start]! & 0xc0) === 0x80) start -= 1;
  if (start < 0) return bytes;
  const lead = bytes[start]!;
  const needed = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return bytes.length - start < needed ? bytes.subarray(0, start) : bytes;
}

/**
 * The bytes as printable text when they are UTF-8 text (valid, no NUL), else a description
 * like `[binary: 2048 bytes, image/png; first 32 bytes as hex: …]`.
 *
 * @example
 * ```ts
 * textOrDescription(Buffer.from('hi\n'), false);      // 'hi\n'
 * textOrDescription(Buffer.from([0, 1, 2]), false);   // '[binary: 3 bytes; hex: 00 01 02]'
 * ```
 */
export function textOrDescription(bytes: Buffer, truncated: boolean): string {
  const whole = truncated ? completeUtf8(bytes) : bytes;
  const text = textPrefix(whole, whole.length);
  return text === undefined ? describeBinary(bytes) : printable(text);
}
