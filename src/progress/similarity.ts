/**
 * How alike two error outputs are: normalised Levenshtein similarity on capped, whitespace-
 * normalised prefixes.
 *
 * Why capped: edit distance is quadratic-ish (fastest-levenshtein's Myers variant is O(n·m/32)),
 * so comparing two large tool errors whole would be far too slow. The start of an error says what
 * went wrong; the tail is usually a stack or a dump. Comparing the first `maxChars` characters
 * keeps the cost bounded whatever the input.
 * Why whitespace-normalised: re-indented or re-wrapped output is the same error.
 */
import { distance } from 'fastest-levenshtein';
import { DEFAULTS } from '../core/defaults.ts';

/** Options of {@link similarity} and {@link normalizeForComparison}. */
export interface SimilarityOptions {
  /** Characters compared after normalisation. Default `DEFAULTS.progress.compareChars` (2048). */
  readonly maxChars?: number;
}

/** Raw characters read per compared character: enough for heavily indented text, still bounded. */
const RAW_WINDOW_FACTOR = 8;

/**
 * The part of `text` that similarity compares: whitespace runs collapsed to one space, trimmed,
 * cut to `maxChars`. Reads at most `8 × maxChars` raw characters, so its cost does not grow
 * with the input.
 *
 * @example
 * ```ts
 * normalizeForComparison('  Error:\n\t  file   not found  '); // 'Error: file not found'
 * ```
 */
export function normalizeForComparison(text: string, options: SimilarityOptions = {}): string {
  const maxChars = options.maxChars ?? DEFAULTS.progress.compareChars;
  const window = text.length > maxChars * RAW_WINDOW_FACTOR ? text.slice(0, maxChars * RAW_WINDOW_FACTOR) : text;
  return window.replace(/\s+/g, ' ').trim().slice(0, maxChars);
}

/**
 * Normalised Levenshtein similarity of two texts, in [0, 1]: `1 − distance / max(length)` over
 * their normalised prefixes (see {@link normalizeForComparison}). Two empty texts are identical
 * (1); an empty and a non-empty text share nothing (0).
 *
 * @example
 * ```ts
 * similarity('ENOENT: no such file a.txt', 'ENOENT: no such file b.txt'); // ≈ 0.96
 * similarity('timeout', 'permission denied');                             // ≈ 0.12
 * ```
 */
export function similarity(a: string, b: string, options: SimilarityOptions = {}): number {
  const left = normalizeForComparison(a, options);
  const right = normalizeForComparison(b, options);
  if (left === right) return 1;
  const longest = Math.max(left.length, right.length);
  return 1 - distance(left, right) / longest;
}
