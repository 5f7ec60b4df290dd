/**
 * Similarity of error outputs: normalised Levenshtein on whitespace-normalised, capped
 * prefixes, so its cost stays bounded whatever the size of the outputs.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/core/defaults.ts';
import { normalizeForComparison, similarity } from '../../src/progress/similarity.ts';

/** Deterministic pseudo-random letters: worst case for edit distance (few shared runs). */
function letters(length: number, seed: number): string {
  const out: string[] = [];
  let x = seed;
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    out.push(String.fromCharCode(97 + (x % 26)));
  }
  return out.join('');
}

describe('normalizeForComparison', () => {
  it('collapses whitespace runs and trims', () => {
    expect(normalizeForComparison('  Error:\n\t  file   not\r\nfound  ')).toBe('Error: file not found');
  });

  it('cuts to the configured number of characters (default from DEFAULTS.progress.compareChars)', () => {
    expect(normalizeForComparison('x'.repeat(10_000))).toHaveLength(DEFAULTS.progress.compareChars);
    expect(normalizeForComparison('abcdef', { maxChars: 3 })).toBe('abc');
  });
});

describe('similarity', () => {
  it('is 1 for identical texts, including texts that differ only in whitespace, and for two empty texts', () => {
    expect(similarity('ENOENT: a.txt', 'ENOENT: a.txt')).toBe(1);
    expect(similarity('ENOENT:   a.txt\n', ' ENOENT: a.txt')).toBe(1);
    expect(similarity('', '')).toBe(1);
  });

  it('is 0 between an empty and a non-empty text, and 1 − distance / longest otherwise', () => {
    expect(similarity('', 'boom')).toBe(0);
    // One substitution in 10 characters.
    expect(similarity('abcdefghij', 'abcdefghiX')).toBeCloseTo(0.9, 10);
    // kitten → sitting: distance 3, longest 7.
    expect(similarity('kitten', 'sitting')).toBeCloseTo(1 - 3 / 7, 10);
  });

  it('scores near-identical errors high and unrelated errors low', () => {
    expect(similarity('ENOENT: no such file a.txt', 'ENOENT: no such file b.txt')).toBeGreaterThan(0.85);
    expect(similarity('Request timed out after 30000 ms', 'Permission denied: /etc/shadow')).toBeLessThan(0.5);
  });

  it('compares only the capped prefix: texts differing after it count as identical', () => {
    const head = 'x'.repeat(100);
    expect(similarity(`${head}AAAA`, `${head}BBBB`, { maxChars: 100 })).toBe(1);
    expect(similarity(`${head}AAAA`, `${head}BBBB`, { maxChars: 104 })).toBeCloseTo(1 - 4 / 104, 10);
  });

  it('compares two 1 MB outputs in bounded time (capped prefixes, not the whole text)', () => {
    const a = letters(1024 * 1024, 1);
    const b = letters(1024 * 1024, 2);
    similarity(a, b); // warm up the JIT
    const runs = 5;
    const started = performance.now();
    let score = 0;
    for (let i = 0; i < runs; i++) score = similarity(a, b);
    const perCallMs = (performance.now() - started) / runs;
    // Compared whole, two 1 MB texts would take hours; capped, a call takes milliseconds. The
    // bound only has to tell the two apart, with room for a loaded machine.
    expect(perCallMs).toBeLessThan(2_000);
    expect(score).toBeGreaterThan(0);
    expect(score).toBeLessThan(0.6);
  });

  it('reads a bounded window of a whitespace-heavy huge text (cost does not grow with the input)', () => {
    const spaced = ' \n\t'.repeat(400_000) + 'tail';
    const started = performance.now();
    expect(normalizeForComparison(spaced)).toBe('');
    expect(performance.now() - started).toBeLessThan(200);
  });
});
