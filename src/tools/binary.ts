/** Raw bytes mean nothing to a model and would not survive JSON; only the first bytes are ever looked at. */

export const BINARY_PREVIEW_BYTES = 32;

export function binaryBytes(value: unknown): Uint8Array | undefined {
  if (value instanceof Uint8Array) return value;
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (typeof SharedArrayBuffer !== 'undefined' && value instanceof SharedArrayBuffer) return new Uint8Array(value);
  return undefined;
}

// Magic numbers of the formats tools most often return by accident.
const SIGNATURES: ReadonlyArray<readonly [string, readonly number[]]> = [
  ['image/png', [0x89, 0x50, 0x4e, 0x47]],
  ['image/jpeg', [0xff, 0xd8, 0xff]],
  ['image/gif', [0x47, 0x49, 0x46, 0x38]],
  ['application/pdf', [0x25, 0x50, 0x44, 0x46]],
  ['application/zip', [0x50, 0x4b, 0x03, 0x04]],
  ['application/gzip', [0x1f, 0x8b]],
];

function sniff(bytes: Uint8Array): string | undefined {
  return SIGNATURES.find(([, magic]) => magic.every((byte, index) => bytes[index] === byte))?.[0];
}

export function describeBinary(bytes: Uint8Array): string {
  const shown = bytes.subarray(0, BINARY_PREVIEW_BYTES);
  const hex = Array.from(shown, (byte) => byte.toString(16).padStart(2, '0')).join(' ');
  const type = sniff(bytes);
  const head = `[binary: ${bytes.byteLength} bytes${type === undefined ? '' : `, ${type}`}`;
  if (bytes.byteLength === 0) return `${head}]`;
  const label = shown.byteLength < bytes.byteLength ? `first ${shown.byteLength} bytes as hex` : 'hex';
  return `${head}; ${label}: ${hex}]`;
}

/** +3 bytes so a character straddling the cut is not mistaken for invalid UTF-8. */
export function textPrefix(bytes: Uint8Array, maxBytes: number): string | undefined {
  const whole = bytes.byteLength <= maxBytes + 3;
  const head = whole ? bytes : bytes.subarray(0, maxBytes + 3);
  let text: string;
  try {
    // `stream: true` holds back an incomplete sequence at the cut instead of failing on it.
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(head, { stream: !whole });
  } catch {
    return undefined;
  }
  return text.includes('\u0000') ? undefined : text;
}
