/** Compares capped, whitespace-normalised prefixes: the start of an error says what went wrong (the tail is usually a stack), and edit distance is quadratic. */
import { distance } from 'fastest-levenshtein';
import { DEFAULTS } from '../core/defaults.ts';

export interface SimilarityOptions {
  /** Characters compared after normalisation. Default `DEFAULTS.progress.compareChars` (2048). */
  readonly maxChars?: number;
}

/** Raw characters read per compared character: enough for heavily indented text, still bounded. */
const RAW_WINDOW_FACTOR = 8;

/** Reads at most `8 × maxChars` raw characters, so its cost does not grow with the input. */
export function normalizeForComparison(text: string, options: SimilarityOptions = {}): string {
  const maxChars = options.maxChars ?? DEFAULTS.progress.compareChars;
  const window = text.length > maxChars * RAW_WINDOW_FACTOR ? text.slice(0, maxChars * RAW_WINDOW_FACTOR) : text;
  return window.replace(/\s+/g, ' ').trim().slice(0, maxChars);
}

/** `1 − distance / max(length)` over the normalised prefixes; two empty texts are identical. */
export function similarity(a: string, b: string, options: SimilarityOptions = {}): number {
  const left = normalizeForComparison(a, options);
  const right = normalizeForComparison(b, options);
  if (left === right) return 1;
  const longest = Math.max(left.length, right.length);
  return 1 - distance(left, right) / longest;
}
