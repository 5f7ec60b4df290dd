import { describeBinary, textPrefix } from '../binary.ts';
import { printable } from '../text.ts';

/** A byte cap can split a UTF-8 sequence; dropping it keeps valid text from looking binary. */
export function completeUtf8(bytes: Buffer): Buffer {
  let start = bytes.length - 1;
  while (start >= 0 && bytes.length - start < 4 && (bytes[start]! & 0xc0) === 0x80) start -= 1;
  if (start < 0) return bytes;
  const lead = bytes[start]!;
  const needed = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return bytes.length - start < needed ? bytes.subarray(0, start) : bytes;
}

export function textOrDescription(bytes: Buffer, truncated: boolean): string {
  const whole = truncated ? completeUtf8(bytes) : bytes;
  const text = textPrefix(whole, whole.length);
  return text === undefined ? describeBinary(bytes) : printable(text);
}
