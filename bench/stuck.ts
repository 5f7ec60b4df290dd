/**
 * Scenario 3a: the cost of stuck detection on huge outputs. Two consecutive 1 MB error outputs
 * that differ only in volatile details (timestamps, ids) go through the runtime's own check:
 * `similarity` (normalised Levenshtein on capped, whitespace-normalised prefixes) and a
 * `ProgressTracker` deciding on the second failure. The cost must not grow with the output.
 */
import { DEFAULTS } from '../src/core/defaults.ts';
import { ProgressTracker } from '../src/progress/progressTracker.ts';
import { similarity } from '../src/progress/similarity.ts';
import { summarize, type Summary } from './stats.ts';

export interface StuckResult {
  readonly label: string;
  readonly outputBytes: number;
  /** Characters compared after normalisation. */
  readonly capChars: number;
  /** The similarity score, or 1/0 for the tracker (stopped / continued). */
  readonly score: number;
  readonly ms: Summary;
}

/**
 * A realistic failing-tool output of `bytes` characters: a stack trace, repeated, whose
 * timestamps and request ids depend on `seed`.
 *
 * @example
 * ```ts
 * errorOutput(1024, 1).length; // 1024
 * ```
 */
export function errorOutput(bytes: number, seed: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line =
      i % 8 === 0
        ? `Error: ECONNREFUSED 10.0.${seed % 256}.${i % 256}:5432 at 2026-01-0${1 + (seed % 9)}T10:${String(i % 60).padStart(2, '0')}:00.${seed}Z (attempt ${i})`
        : `    at Connection.connect (/srv/app/node_modules/pg/lib/connection.js:${40 + (i % 50)}:${(i * 7) % 80}) [req ${seed}-${i}]`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n').slice(0, bytes);
}

function time(repeats: number, once: () => number): { score: number; ms: Summary } {
  let score = 0;
  const times: number[] = [];
  for (let i = 0; i < repeats + 2; i++) {
    const started = performance.now();
    score = once();
    if (i >= 2) times.push(performance.now() - started);
  }
  return { score, ms: summarize(times) };
}

/**
 * @example
 * ```ts
 * const [first] = measureStuck({ repeats: 20 });
 * first?.ms.median; // about a millisecond
 * ```
 */
export function measureStuck(options: { readonly repeats: number; readonly extraCaps?: readonly number[] }): StuckResult[] {
  const bytes = 1024 * 1024;
  const a = errorOutput(bytes, 1);
  const b = errorOutput(bytes, 2);
  const cap = DEFAULTS.progress.compareChars;
  const results: StuckResult[] = [];
  results.push({
    label: `ProgressTracker.recordAndCheck, second failure (threshold ${DEFAULTS.progress.similarityThreshold})`,
    outputBytes: bytes,
    capChars: cap,
    ...time(options.repeats, () => {
      const tracker = new ProgressTracker();
      tracker.recordAndCheck('step', { ok: false, error: a });
      return tracker.recordAndCheck('step', { ok: false, error: b }).kind === 'stop' ? 1 : 0;
    }),
  });
  for (const maxChars of [cap, ...(options.extraCaps ?? [])]) {
    results.push({
      label: `similarity()${maxChars === cap ? ' (default cap)' : ` with maxChars ${maxChars}`}`,
      outputBytes: bytes,
      capChars: maxChars,
      ...time(options.repeats, () => similarity(a, b, { maxChars })),
    });
  }
  return results;
}
