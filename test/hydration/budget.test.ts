import { describe, expect, it } from 'vitest';
import { estimateTokens, fairShares, trimMarker, trimToShare } from '../../src/hydration/budget.ts';

describe('estimateTokens', () => {
  it('counts four characters per token, rounding up', () => {
    expect([estimateTokens(''), estimateTokens('abc'), estimateTokens('abcd'), estimateTokens('abcde')]).toEqual([0, 1, 1, 2]);
  });
});

describe('fairShares', () => {
  it('keeps small items whole and splits the rest evenly among large ones', () => {
    expect(fairShares([100, 5_000, 9_000], 1_000)).toEqual([100, 450, 450]);
  });

  it('gives every item its size when the budget allows', () => {
    expect(fairShares([10, 20, 30], 1_000)).toEqual([10, 20, 30]);
  });

  it('never hands out more than the budget', () => {
    const shares = fairShares([7_000, 3_000, 9_999, 1], 2_001);
    expect(shares.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(2_001);
    expect(fairShares([5, 5], -10)).toEqual([0, 0]);
  });
});

describe('trimToShare', () => {
  it('leaves text that fits untouched', () => {
    expect(trimToShare('hello', 10)).toEqual({ text: 'hello', truncated: false });
  });

  it('cuts to the share with a marker stating the original size', () => {
    const { text, truncated } = trimToShare('x'.repeat(10_000), 400);
    expect(truncated).toBe(true);
    expect(text.length).toBeLessThanOrEqual(400);
    expect(text.endsWith(trimMarker(text.indexOf('\n'), 10_000))).toBe(true);
    expect(text).toMatch(/\[truncated: showing ~\d+ of ~2500 tokens\]$/);
  });

  it('marks text a resolver had already cut, even when it fits', () => {
    expect(trimToShare('abc', 100, 4_000).text).toBe('abc\n[truncated: showing ~1 of ~1000 tokens]');
  });
});
