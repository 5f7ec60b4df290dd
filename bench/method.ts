/**
 * The bench's one method: contenders take turns round by round in one process (the order
 * rotating each round, so drift on a shared machine hits them alike); every run is one sample of
 * wall time per iteration; process CPU is taken per contender per round. Reported: median and
 * p10 of the samples.
 */
import { summarize, type Summary } from './stats.ts';
import type { Prepared } from './scenarios/types.ts';

export interface Entry {
  readonly id: string;
  readonly label: string;
  readonly prepared: Prepared;
}

export interface RoundOptions {
  /** Loop iterations per run (react-N's N). */
  readonly n: number;
  readonly rounds: number;
  readonly runsPerRound: number;
  /** Untimed runs of each contender before the first round. */
  readonly warmupRuns: number;
}

/** One contender's figures at one N. */
export interface IterationResult {
  readonly id: string;
  readonly label: string;
  readonly n: number;
  /** Runs made, warm-up included: what the call counts are checked against. */
  readonly runs: number;
  /** Wall time per iteration, µs: one sample per run. */
  readonly perIterationUs: Summary;
  /** Process CPU (user + system, all threads) per iteration, µs: one sample per round. */
  readonly cpuPerIterationUs: Summary;
}

/**
 * @example
 * ```ts
 * const [bare] = await measureRounds([{ id: 'bare', label: '(a)', prepared: bareLoop.create({ n: 10, delayMs: 0 }) }], { n: 10, rounds: 5, runsPerRound: 20, warmupRuns: 50 });
 * bare?.perIterationUs.median;
 * ```
 */
export async function measureRounds(entries: readonly Entry[], options: RoundOptions): Promise<IterationResult[]> {
  const { n } = options;
  for (const entry of entries) {
    for (let i = 0; i < options.warmupRuns; i++) await entry.prepared.run();
  }
  const wall: number[][] = entries.map(() => []);
  const cpu: number[][] = entries.map(() => []);
  for (let round = 0; round < options.rounds; round++) {
    for (let k = 0; k < entries.length; k++) {
      const index = (round + k) % entries.length;
      const { prepared } = entries[index] as Entry;
      const samples = wall[index] as number[];
      const started = process.cpuUsage();
      for (let r = 0; r < options.runsPerRound; r++) {
        const t0 = performance.now();
        await prepared.run();
        samples.push(((performance.now() - t0) * 1000) / n);
      }
      const used = process.cpuUsage(started);
      (cpu[index] as number[]).push((used.user + used.system) / (options.runsPerRound * n));
    }
  }
  return entries.map((entry, i) => ({
    id: entry.id,
    label: entry.label,
    n,
    runs: options.warmupRuns + options.rounds * options.runsPerRound,
    perIterationUs: summarize(wall[i] as number[]),
    cpuPerIterationUs: summarize(cpu[i] as number[]),
  }));
}
