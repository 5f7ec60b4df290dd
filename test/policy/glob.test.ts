import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findMatchingGlob, globToRegExp, matchesGlob } from '../../src/policy/glob.ts';

/** Glob semantics by definition, over code points: the oracle the compiled RegExp must agree with. */
function referenceMatch(name: string, pattern: string): boolean {
  const n = [...name];
  const p = [...pattern];
  // matches[i][j]: the first i pattern characters match the first j name characters.
  const matches = Array.from({ length: p.length + 1 }, () => new Array<boolean>(n.length + 1).fill(false));
  matches[0]![0] = true;
  for (let i = 1; i <= p.length; i += 1) {
    for (let j = 0; j <= n.length; j += 1) {
      const char = p[i - 1];
      if (char === '*') matches[i]![j] = matches[i - 1]![j]! || (j > 0 && matches[i]![j - 1]!);
      else if (j > 0) matches[i]![j] = matches[i - 1]![j - 1]! && (char === '?' || char === n[j - 1]);
    }
  }
  return matches[p.length]![n.length]!;
}

describe('globToRegExp', () => {
  it('matches any run of characters with * and exactly one with ?', () => {
    expect(matchesGlob('read_file', 'read_*')).toBe(true);
    expect(matchesGlob('read_', 'read_*')).toBe(true);
    expect(matchesGlob('tool_1', 'tool_?')).toBe(true);
    expect(matchesGlob('tool_', 'tool_?')).toBe(false);
    expect(matchesGlob('tool_12', 'tool_?')).toBe(false);
    expect(matchesGlob('a\nb', 'a*b')).toBe(true);
    expect(matchesGlob('😀', '?')).toBe(true);
  });

  it('is anchored at both ends', () => {
    expect(matchesGlob('xread', 'read')).toBe(false);
    expect(matchesGlob('readx', 'read')).toBe(false);
    expect(matchesGlob('fs.read.all', '*.read')).toBe(false);
    expect(matchesGlob('', '')).toBe(true);
    expect(matchesGlob('a', '')).toBe(false);
  });

  it('treats regex metacharacters literally', () => {
    expect(matchesGlob('fs.read', 'fs.read')).toBe(true);
    expect(matchesGlob('fsxread', 'fs.read')).toBe(false);
    expect(matchesGlob('aaa', 'a+')).toBe(false);
    expect(matchesGlob('a+', 'a+')).toBe(true);
    expect(matchesGlob('f(x)', 'f(x)')).toBe(true);
    expect(matchesGlob('fx', 'f(x)')).toBe(false);
    for (const literal of ['^$', '[a]', '{1}', 'a|b', '\\d', '/x/', '(?=a)', '\\1']) {
      expect(matchesGlob(literal, literal), literal).toBe(true);
    }
    expect(matchesGlob('a', '[a]')).toBe(false);
    expect(matchesGlob('7', '\\d')).toBe(false);
  });

  it('returns the same compiled RegExp for the same pattern', () => {
    expect(globToRegExp('net.*')).toBe(globToRegExp('net.*'));
  });

  it('stays fast on patterns that make naive regexes backtrack exponentially', () => {
    const pattern = `${'a*'.repeat(12)}b`;
    const started = performance.now();
    expect(matchesGlob('a'.repeat(10_000), pattern)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('matches a pattern without wildcards against exactly itself', () => {
    const literal = fc.string({ unit: 'grapheme' }).filter((s) => !s.includes('*') && !s.includes('?'));
    fc.assert(
      fc.property(literal, fc.string({ unit: 'grapheme' }), (pattern, other) => {
        expect(matchesGlob(pattern, pattern)).toBe(true);
        expect(matchesGlob(other, pattern)).toBe(other === pattern);
      }),
    );
  });

  it('matches any string with *', () => {
    // Graphemes plus newlines and lone surrogates, which a plain `.` or a non-Unicode regex would miss.
    const unit = fc.oneof(fc.constantFrom('\n', '\r', '\uD800', '\uDC00', '*', '?'), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }));
    fc.assert(fc.property(fc.string({ unit }), (name) => matchesGlob(name, '*') && matchesGlob(name, '**')));
  });

  it('finds a match whenever one exists with several stars', () => {
    // Segments between stars must be placed at their first occurrence, never a later one.
    expect(matchesGlob('aba', '*a*b*')).toBe(true);
    expect(matchesGlob('xaybza', '*a*b*a')).toBe(true);
    expect(matchesGlob('ab', '*a*b*a')).toBe(false);
    expect(matchesGlob('aaa', 'a*a*a')).toBe(true);
    expect(matchesGlob('aa', 'a*a*a')).toBe(false);
  });

  it.each([
    ['a dense alphabet', ['a', 'b', '*', '?'], 10],
    ['metacharacters and astral characters', ['a', '.', '+', '(', '\\', '*', '?', '😀'], 8],
  ])('agrees with a reference glob matcher on random patterns over %s', (_label, chars, maxLength) => {
    const text = (length: number) => fc.array(fc.constantFrom(...chars), { maxLength: length }).map((cs) => cs.join(''));
    fc.assert(
      fc.property(text(maxLength), text(maxLength + 2), (p, n) => {
        expect(matchesGlob(n, p), `${JSON.stringify(n)} vs ${JSON.stringify(p)}`).toBe(referenceMatch(n, p));
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('findMatchingGlob', () => {
  it('returns the first pattern that matches, or undefined', () => {
    expect(findMatchingGlob('fs.write', ['net.*', 'fs.*', '*'])).toBe('fs.*');
    expect(findMatchingGlob('fs.write', ['net.*'])).toBeUndefined();
    expect(findMatchingGlob('fs.write', [])).toBeUndefined();
  });
});
