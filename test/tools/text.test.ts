import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonStringBytes, printable, quoteUntrusted, sliceChars, toWellFormed, utf8PrefixLength } from '../../src/tools/text.ts';

const anyText = fc
  .array(fc.oneof(fc.string({ unit: 'binary', maxLength: 10 }), fc.constantFrom('\uD800', '\uDC00', '"', '\\', '\u0001', '\n')), { maxLength: 30 })
  .map((parts) => parts.join(''));

describe('text helpers', () => {
  it('jsonStringBytes equals the UTF-8 size of JSON.stringify (property)', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(jsonStringBytes(text)).toBe(Buffer.byteLength(JSON.stringify(text)));
      }),
    );
  });

  it('utf8PrefixLength picks the longest prefix that fits and never splits a pair (property)', () => {
    fc.assert(
      fc.property(anyText, fc.nat(100), (text, budget) => {
        const end = utf8PrefixLength(text, budget);
        const head = toWellFormed(text.slice(0, end));
        expect(Buffer.byteLength(head)).toBeLessThanOrEqual(budget);
        expect(head).toBe(toWellFormed(text).slice(0, head.length));
        if (end < text.length) {
          const next = toWellFormed(text).codePointAt(head.length) ?? 0;
          expect(Buffer.byteLength(head) + Buffer.byteLength(String.fromCodePoint(next))).toBeGreaterThan(budget);
        }
      }),
    );
  });

  it('sliceChars keeps surrogate pairs whole', () => {
    expect(sliceChars('ab😀c', 3)).toBe('ab');
    expect(sliceChars('ab😀c', 4)).toBe('ab😀');
    expect(sliceChars('abc', 10)).toBe('abc');
  });

  it('toWellFormed replaces only lone surrogates', () => {
    expect(toWellFormed('😀\uD800x\uDC00')).toBe('😀\uFFFDx\uFFFD');
  });

  it('printable removes ANSI codes and control characters but keeps newlines and tabs', () => {
    expect(printable('\u001b[1;31mA\u001b[0m\tB\nC\u0000\u007f')).toBe('A\tB\nC  ');
  });

  it('quoteUntrusted truncates and escapes', () => {
    expect(quoteUntrusted('a"b\n')).toBe('"a\\"b\\n"');
    expect(quoteUntrusted('x'.repeat(100), 5)).toBe('"xxxxx…"');
  });
});
