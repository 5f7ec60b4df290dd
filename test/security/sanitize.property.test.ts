import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSanitizer, type JsonValue } from '../../src/inspect/index.ts';

// Any value a snapshot or event could hold, including Maps, Sets, Dates, bigints, typed arrays,
// boxed values, sparse arrays and null-prototype objects.
const anyValue = fc.anything({
  withBigInt: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withTypedArray: true,
  withNullPrototype: true,
  withSparseArray: true,
  withBoxedValues: true,
  withObjectString: true,
  maxDepth: 4,
});

// Unmistakable: no random string will contain it unless it was planted.
const canary = fc.stringMatching(/^[A-Za-z0-9]{8,24}$/).map((tail) => `sk-CANARY${tail}`);

const secretKey = fc.constantFrom('apiKey', 'API_KEY', 'x-api-key', 'Authorization', 'password', 'accessToken', 'client_secret', 'Token');

/** Put `secret` somewhere inside `value` three ways, and tie the whole thing into cycles. */
function plant(value: unknown, secret: string, key: string, prefix: string, suffix: string): Record<string, unknown> {
  const holder: Record<string, unknown> = {
    value,
    inText: `${prefix} ${secret} ${suffix}`,
    [key]: { deep: [secret, { again: `${prefix}${secret}` }] },
    jsonText: JSON.stringify({ [key]: `${prefix}${secret}` }),
    list: [value, `${secret}`],
  };
  holder['self'] = holder;
  (holder['list'] as unknown[]).push(holder);
  if (value !== null && typeof value === 'object' && Object.isExtensible(value)) {
    try {
      (value as Record<string, unknown>)['back'] = holder;
    } catch {
      // Typed arrays and boxed values refuse new keys; the holder's own cycles remain.
    }
  }
  return holder;
}

function hasProtoKey(value: JsonValue): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(hasProtoKey);
  return Object.keys(value).some((k) => k === '__proto__' || hasProtoKey(value[k] as JsonValue));
}

describe('sanitize (properties)', () => {
  it('never throws and always returns JSON that reads back unchanged, cycles included', () => {
    const clean = createSanitizer({ maxStringLength: 64 });
    fc.assert(
      fc.property(anyValue, canary, secretKey, fc.string(), fc.string(), (value, secret, key, prefix, suffix) => {
        const out = clean(plant(value, secret, key, prefix, suffix));
        const text = JSON.stringify(out);
        expect(JSON.parse(text)).toEqual(out);
        expect(hasProtoKey(out)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('never lets a planted secret through', () => {
    const clean = createSanitizer();
    fc.assert(
      fc.property(anyValue, canary, secretKey, fc.string(), fc.string(), (value, secret, key, prefix, suffix) => {
        const text = JSON.stringify(clean(plant(value, secret, key, prefix, suffix)));
        expect(text).not.toContain('CANARY');
      }),
      { numRuns: 300 },
    );
  });

  it('never lets a literal secret through, even glued to other text or used as a key', () => {
    const literal = fc.stringMatching(/^[A-Za-z0-9]{4,20}$/).map((tail) => `LIT${tail}LIT`);
    fc.assert(
      fc.property(anyValue, literal, fc.string(), (value, secret, glue) => {
        const clean = createSanitizer({ secrets: [secret] });
        const input = { value, [`${glue}${secret}`]: `${glue}${secret}${glue}`, list: [secret, { [secret]: secret }] };
        expect(JSON.stringify(clean(input))).not.toContain(secret);
      }),
      { numRuns: 200 },
    );
  });

  it('leaves its input unchanged', () => {
    const clean = createSanitizer({ maxStringLength: 16 });
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const before = JSON.stringify(value);
        clean(value);
        expect(JSON.stringify(value)).toBe(before);
      }),
      { numRuns: 200 },
    );
  });
});
