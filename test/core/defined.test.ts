import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defined } from '../../src/core/defined.ts';

describe('defined', () => {
  it('keeps the keys whose value is set, in their order, and drops those set to undefined', () => {
    const result = defined({ a: 1, b: undefined, c: null, d: 0, e: '', f: false });
    expect(result).toEqual({ a: 1, c: null, d: 0, e: '', f: false });
    expect(Object.keys(result)).toEqual(['a', 'c', 'd', 'e', 'f']);
    expect('b' in result).toBe(false);
  });

  it('spread over defaults, leaves a default in place where the value is undefined', () => {
    const defaults = { timeoutMs: 1000, retries: 3 };
    const timeoutMs: number | undefined = undefined;
    expect({ ...defaults, ...defined({ timeoutMs, retries: 5 }) }).toEqual({ timeoutMs: 1000, retries: 5 });
  });

  it('keeps a key named __proto__ as an own property, as a spread of a computed key does', () => {
    const fields = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    fields.x = undefined;
    const result = defined(fields);
    expect(Object.keys(result)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
  });

  it('gives the same object as one conditional spread per key, for any mix of defined and undefined values', () => {
    const value = fc.oneof(fc.constant(undefined), fc.anything());
    fc.assert(
      fc.property(fc.dictionary(fc.string(), value, { maxKeys: 8 }), (fields) => {
        const spread = Object.keys(fields).reduce<Record<string, unknown>>(
          (built, key) => ({ ...built, ...(fields[key] === undefined ? {} : { [key]: fields[key] }) }),
          {},
        );
        const result = defined(fields);
        expect(Object.entries(result)).toEqual(Object.entries(spread));
        expect(Object.values(result)).not.toContain(undefined);
      }),
    );
  });
});
