/**
 * Parsing persisted JSON: text that cannot spell a forbidden key skips the reviver that looks
 * for one; text that spells one, even with \u escapes, is still refused.
 */
import { describe, expect, it } from 'vitest';
import { safeJsonParse } from '../../src/persistence/safeJson.ts';

describe('safeJsonParse', () => {
  it('still refuses __proto__ spelt with a \\u escape, and parses everything else the same', () => {
    expect(safeJsonParse('{"a":{"\\u005f_proto__":{"polluted":true}}}')).toMatchObject({ ok: false });
    expect(safeJsonParse('{"construct\\u006fr":{"prototype":{}}}')).toMatchObject({ ok: false });
    expect(safeJsonParse('{"a":[1,{"b":"c\\n"}]}')).toEqual({ ok: true, value: { a: [1, { b: 'c\n' }] } });
    expect(safeJsonParse('{"a":')).toMatchObject({ ok: false });
  });
});
