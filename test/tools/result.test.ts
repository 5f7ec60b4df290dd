import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { serializeToolResult, truncationMarker } from '../../src/tools/result.ts';

const TEN_MB = 10 * 1024 * 1024;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const MARKER = /\n\[truncated: showing (\d+) of (at least )?(\d+) bytes\]$/;

function bytes(text: string): number {
  return Buffer.byteLength(text);
}

function wellFormed(text: string): string {
  return text.replace(new RegExp(LONE_SURROGATE.source, 'g'), '\uFFFD');
}

/** Split truncated content into the shown head and the numbers of its marker. */
function splitMarker(content: string): { head: string; shown: number; original: number } {
  const match = MARKER.exec(content);
  if (match === null) throw new Error(`no marker in ${content.slice(-80)}`);
  return { head: content.slice(0, match.index), shown: Number(match[1]), original: Number(match[3]) };
}

describe('serializeToolResult', () => {
  describe('small values', () => {
    it.each([
      ['a string as is', 'hello', 'hello'],
      ['undefined as empty text', undefined, ''],
      ['null as JSON', null, 'null'],
      ['a number', 42.5, '42.5'],
      ['a boolean', false, 'false'],
      ['a bigint', 12345678901234567890n, '12345678901234567890'],
      ['an object as compact JSON', { sum: 3, parts: [1, 2] }, '{"sum":3,"parts":[1,2]}'],
      ['a function by name', function lookup() {}, '[function lookup]'],
    ])('renders %s', (_label, value, expected) => {
      expect(serializeToolResult(value)).toEqual({ content: expected, truncated: false, originalBytes: bytes(expected) });
    });

    it('serialises non-string JSON values exactly like JSON.stringify', () => {
      const nonString = fc.jsonValue().filter((value) => typeof value !== 'string');
      fc.assert(
        fc.property(nonString, (value) => {
          expect(serializeToolResult(value, 1_000_000).content).toBe(JSON.stringify(value));
        }),
      );
    });
  });

  describe('awkward objects', () => {
    it('marks cycles and keeps shared references', () => {
      const shared = { n: 1 };
      const cyclic: Record<string, unknown> = { a: shared, b: shared };
      cyclic.self = cyclic;
      expect(serializeToolResult(cyclic).content).toBe('{"a":{"n":1},"b":{"n":1},"self":"[Circular]"}');
    });

    it('renders BigInt, Map, Set, Error, Date and omitted values', () => {
      const value = {
        big: 2n ** 70n,
        map: new Map<unknown, unknown>([['k', 1], [2, 'two']]),
        set: new Set([1, 2]),
        error: new TypeError('nope'),
        at: new Date(0),
        skip: undefined,
        fn: () => 1,
        list: [undefined, () => 1, Number.NaN],
      };
      expect(serializeToolResult(value).content).toBe(
        '{"big":1180591620717411303424,"map":{"k":1,"2":"two"},"set":[1,2],"error":{"name":"TypeError","message":"nope"},' +
          '"at":"1970-01-01T00:00:00.000Z","list":[null,null,null]}',
      );
    });

    it('describes throwing getters, throwing toJSON and revoked proxies instead of throwing', () => {
      const getter = Object.defineProperty({ ok: 1 }, 'bad', {
        enumerable: true,
        get() {
          throw new Error('no access');
        },
      });
      expect(serializeToolResult(getter).content).toBe('{"ok":1,"bad":"[Unreadable: Error: no access]"}');
      expect(serializeToolResult({ x: { toJSON: () => { throw new RangeError('later'); } } }).content).toBe(
        '{"x":"[toJSON threw: RangeError: later]"}',
      );
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      expect(serializeToolResult(proxy).content).toMatch(/^\[unserializable object: TypeError\]$/);
      expect(serializeToolResult({ inner: proxy }).content).toMatch(/^\{"inner":"\[Unreadable: TypeError/);
    });

    it('bounds very deep nesting instead of overflowing the stack', () => {
      let deep: unknown = 'bottom';
      for (let i = 0; i < 100_000; i += 1) deep = [deep];
      const result = serializeToolResult(deep);
      expect(result.content).toContain('"[Max depth]"');
      expect(result.truncated).toBe(false);
    });

    it('describes a 10 MB buffer nested in an object instead of expanding it', () => {
      const started = performance.now();
      const result = serializeToolResult({ status: 200, body: randomBytes(TEN_MB) });
      expect(result.content).toMatch(/^\{"status":200,"body":"\[binary: 10485760 bytes; first 32 bytes as hex: [0-9a-f ]+\]"\}$/);
      expect(performance.now() - started).toBeLessThan(1_000);
    });
  });

  describe('huge output', () => {
    it('truncates a 10 MB string inside the budget and states the original size', () => {
      const huge = 'x'.repeat(TEN_MB);
      const started = performance.now();
      const result = serializeToolResult(huge);
      const elapsed = performance.now() - started;
      expect(result.truncated).toBe(true);
      expect(result.originalBytes).toBe(TEN_MB);
      expect(bytes(result.content)).toBeLessThanOrEqual(65_536);
      expect(result.content).toMatch(/\n\[truncated: showing \d+ of 10485760 bytes\]$/);
      const { head, shown } = splitMarker(result.content);
      expect(shown).toBe(bytes(head));
      expect(bytes(result.content)).toBeGreaterThan(65_536 - 60);
      // Linear work on 10 MB takes milliseconds; the bound leaves room for a loaded machine.
      expect(elapsed).toBeLessThan(5_000);
    });

    it('shows a 10 MB text buffer as text, truncated', () => {
      const result = serializeToolResult(Buffer.from('line\n'.repeat(TEN_MB / 5)));
      expect(result.originalBytes).toBe(TEN_MB);
      expect(result.content.startsWith('line\nline\n')).toBe(true);
      expect(result.content).toMatch(/of 10485760 bytes\]$/);
      expect(bytes(result.content)).toBeLessThanOrEqual(65_536);
    });

    it('describes 10 MB of binary data in one short line', () => {
      const result = serializeToolResult(randomBytes(TEN_MB));
      expect(result.truncated).toBe(true);
      expect(result.originalBytes).toBe(TEN_MB);
      expect(result.content).toMatch(/^\[binary: 10485760 bytes; first 32 bytes as hex: ([0-9a-f]{2} ){31}[0-9a-f]{2}\]$/);
    });

    it('counts the full size of a large object while emitting only the budget', () => {
      const rows = Array.from({ length: 100_000 }, (_, id) => ({ id, name: `row ${id}`, tags: ['a', 'ü'] }));
      const result = serializeToolResult(rows);
      expect(result.originalBytes).toBe(bytes(JSON.stringify(rows)));
      expect(bytes(result.content)).toBeLessThanOrEqual(65_536);
      expect(JSON.stringify(rows).startsWith(splitMarker(result.content).head)).toBe(true);
    });

    it('stops counting after about a million values and says "at least"', () => {
      // A DAG that doubles at every level would take 2^40 steps to walk in full.
      let dag: unknown = 'leaf';
      for (let level = 0; level < 40; level += 1) dag = [dag, dag];
      const started = performance.now();
      const result = serializeToolResult(dag);
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(result.truncated).toBe(true);
      expect(result.content).toMatch(/\n\[truncated: showing \d+ of at least \d+ bytes\]$/);
      expect(bytes(result.content)).toBeLessThanOrEqual(65_536);
    });

    it('counts escaped string bytes exactly when a long nested string is cut', () => {
      const value = { text: `"quoted"\n\u0001é😀\uD800`.repeat(20_000) };
      const result = serializeToolResult(value, 1_000);
      expect(result.originalBytes).toBe(bytes(JSON.stringify(value)));
      expect(JSON.stringify(value).startsWith(splitMarker(result.content).head)).toBe(true);
    });
  });

  describe('invalid UTF-8 and surrogates', () => {
    it('describes invalid UTF-8 bytes as binary with a hex preview', () => {
      const result = serializeToolResult(Buffer.from([0xff, 0xfe, 0x00, 0x41, 0xc3]));
      expect(result).toEqual({ content: '[binary: 5 bytes; hex: ff fe 00 41 c3]', truncated: false, originalBytes: 5 });
    });

    it('names well-known binary formats and accepts any binary container', () => {
      const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]);
      expect(serializeToolResult(png).content).toContain('[binary: 10 bytes, image/png;');
      expect(serializeToolResult(new Float32Array([1.5]).buffer).content).toBe('[binary: 4 bytes; hex: 00 00 c0 3f]');
      expect(serializeToolResult(new DataView(png.buffer, 0, 2)).content).toBe('[binary: 2 bytes; hex: 89 50]');
    });

    it('decodes a UTF-8 buffer whose cut falls inside a character', () => {
      const result = serializeToolResult(Buffer.from('€'.repeat(100)), 100);
      expect(result.content).not.toContain('\uFFFD');
      expect(splitMarker(result.content).head).toBe('€'.repeat(splitMarker(result.content).shown / 3));
    });

    it('replaces lone surrogates in strings and escapes them inside JSON', () => {
      expect(serializeToolResult('a\uD800b\uDC00').content).toBe('a\uFFFDb\uFFFD');
      expect(serializeToolResult({ s: '\uD83D' }).content).toBe('{"s":"\\ud83d"}');
    });

    it('never splits a multi-byte character or a surrogate pair at the cut', () => {
      for (let budget = 40; budget < 80; budget += 1) {
        const content = serializeToolResult('é😀€'.repeat(50), budget).content;
        expect(bytes(content)).toBeLessThanOrEqual(budget);
        expect(LONE_SURROGATE.test(content)).toBe(false);
        expect(content).not.toContain('\uFFFD');
      }
    });

    it('keeps content within budget, well-formed and a prefix of the original (property)', () => {
      const text = fc
        .array(fc.oneof(fc.string({ unit: 'binary', maxLength: 20 }), fc.constantFrom('\uD800', '\uDFFF', '😀', 'é', '\n')), {
          maxLength: 40,
        })
        .map((parts) => parts.join(''));
      fc.assert(
        fc.property(text, fc.integer({ min: 0, max: 300 }), (original, budget) => {
          const result = serializeToolResult(original, budget);
          const markerOnly = truncationMarker(0, bytes(original)).length;
          expect(bytes(result.content)).toBeLessThanOrEqual(Math.max(budget, markerOnly));
          expect(LONE_SURROGATE.test(result.content)).toBe(false);
          expect(result.originalBytes).toBe(bytes(original));
          if (!result.truncated) {
            expect(result.content).toBe(wellFormed(original));
            return;
          }
          const { head, shown, original: stated } = splitMarker(result.content);
          expect(wellFormed(original).startsWith(head)).toBe(true);
          expect(shown).toBe(bytes(head));
          expect(stated).toBe(bytes(original));
        }),
        { numRuns: 500 },
      );
    });
  });

  it('rejects a negative or NaN budget', () => {
    expect(() => serializeToolResult('x', -1)).toThrow(/maxBytes must be a number >= 0/);
    expect(() => serializeToolResult('x', Number.NaN)).toThrow(/maxBytes/);
  });
});
