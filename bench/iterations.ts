/**
 * Scenario 1, react-N: per-iteration overhead of each contender, measured side by side.
 *
 * Each sample times enough consecutive runs to cover at least `iterationsPerSample` loop
 * iterations (10 runs of react-10, one run of react-100), so garbage-collection pauses are
 * amortised the same way for every N; per-iteration time = sample time / iterations. The
 * contenders are interleaved round by round (order rotating) so drift on a shared machine hits
 * them all alike. Reported: the median over all samples after a warm-up.
 */
import { summarize, type Summary } from './stats.ts';
import type { Contender, RunOnce } from './scenarios/types.ts';

export interface IterationOptions {
  readonly n: number;
  readonly rounds: number;
  readonly samplesPerRound: number;
  /** Loop iterations per warm-up of each contender before measuring. */
  readonly warmupIterations: number;
  readonly iterationsPerSample: number;
}

/** Per-iteration time of one contender at one N, in µs. */
export interface IterationResult {
  readonly id: string;
  readonly label: string;
  readonly n: number;
  readonly runsPerSample: number;
  readonly perIterationUs: Summary;
  /** Process CPU time (user + system, all threads) per iteration, in µs: steadier than wall time on a busy machine. */
  readonly cpuPerIterationUs: Summary;
}

/**
 * @example
 * ```ts
 * const results = await measureIterations([bareLoop, xstateMachine], { n: 10, rounds: 10, samplesPerRound: 10, warmupIterations: 2000, iterationsPerSample: 100 });
 * ```
 */
export async function measureIterations(contenders: readonly Contender[], options: IterationOptions): Promise<IterationResult[]> {
  const { n } = options;
  const runsPerSample = Math.max(1, Math.ceil(options.iterationsPerSample / n));
  const runners: RunOnce[] = contenders.map((contender) => contender.create({ n, delayMs: 0 }));
  for (const runOnce of runners) {
    for (let i = 0; i < Math.ceil(options.warmupIterations / n); i++) await runOnce();
  }
  const samples: number[][] = contenders.map(() => []);
  const cpuSamples: number[][] = contenders.map(() => []);
  for (let round = 0; round < options.rounds; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const index = (round + k) % contenders.length;
      const runOnce = runners[index] as RunOnce;
      const into = samples[index] as number[];
      const cpuInto = cpuSamples[index] as number[];
      for (let s = 0; s < options.samplesPerRound; s++) {
        const cpu = process.cpuUsage();
        const started = performance.now();
        for (let r = 0; r < runsPerSample; r++) await runOnce();
        into.push(((performance.now() - started) * 1000) / (runsPerSample * n));
        const used = process.cpuUsage(cpu);
        cpuInto.push((used.user + used.system) / (runsPerSample * n));
      }
    }
  }
  return contenders.map((contender, i) => ({
    id: contender.id,
    label: contender.label,
    n,
    runsPerSample,
    perIterationUs: summarize(samples[i] as number[]),
    cpuPerIterationUs: summarize(cpuSamples[i] as number[]),
  }));
}
