/**
 * Small statistics for benchmark samples: sorted-order percentiles, no interpolation surprises.
 */

/** Summary of one set of samples (same unit as the samples). */
export interface Summary {
  readonly count: number;
  readonly median: number;
  readonly p10: number;
  readonly p90: number;
  readonly mean: number;
  readonly min: number;
  /** The samples themselves, in the order they were taken. */
  readonly samples: readonly number[];
}

/**
 * @example
 * ```ts
 * summarize([3, 1, 2]).median; // 2
 * ```
 */
export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) return { count: 0, median: NaN, p10: NaN, p90: NaN, mean: NaN, min: NaN, samples: [] };
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
  return {
    count: sorted.length,
    median: at(0.5),
    p10: at(0.1),
    p90: at(0.9),
    mean: sorted.reduce((sum, x) => sum + x, 0) / sorted.length,
    min: sorted[0] as number,
    samples: [...samples],
  };
}

/** Round for display: 3 significant digits below 100, integers above. */
export function fmt(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (Math.abs(value) >= 100) return Math.round(value).toString();
  return Number(value.toPrecision(digits)).toString();
}

/**
 * The sample at quantile `q` (0–1) in sorted order, as `summarize` picks them; NaN without samples.
 *
 * @example
 * ```ts
 * quantile([5, 1, 3, 2, 4], 0.99); // 5
 * ```
 */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}
