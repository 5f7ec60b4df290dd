/**
 * Scenario 2: many agents in flight at once, each running react-N against a model that takes
 * `delayMs` per call. Wall time from the first start to the last answer (ideal: N × delayMs),
 * and the heap each in-flight agent holds.
 *
 * Two ways to have 1 000 agents: `shared` — 1 000 concurrent runs of one definition (one
 * machine, one actorloop agent), as the peers were measured; `perAgent` — 1 000 separate
 * definitions (1 000 `createAgent` calls), the stricter case for memory.
 */
import { summarize, type Summary } from './stats.ts';
import type { Contender, RunOnce } from './scenarios/types.ts';

export type ConcurrencyMode = 'shared' | 'perAgent';

export interface ConcurrencyOptions {
  readonly agents: number;
  readonly n: number;
  readonly delayMs: number;
  /** Timed repetitions after one warm-up; the median is reported. */
  readonly repeats: number;
  readonly mode: ConcurrencyMode;
}

export interface ConcurrencyResult {
  readonly id: string;
  readonly label: string;
  readonly mode: ConcurrencyMode;
  readonly agents: number;
  readonly n: number;
  readonly delayMs: number;
  readonly wallMs: Summary;
  /** Process CPU time of a batch (user + system, all threads, GC included): steadier than wall time on a busy machine. */
  readonly cpuMs: Summary;
  /** Peak retained heap per in-flight agent (after a full GC), in KB; null without --expose-gc. */
  readonly heapPerAgentKb: number | null;
  /**
   * Wall time over (b)'s, taken within each group of measurements made close together (one
   * process of interleaved contenders, or one round of processes each alone) — one ratio per
   * group. On a shared machine whose speed drifts by tens of percent over minutes, a ratio of two
   * neighbours is steadier than the ratio of two medians pooled over the whole run.
   */
  readonly wallVsXstate?: Summary;
}

function runners(contender: Contender, options: ConcurrencyOptions): RunOnce[] {
  const config = { n: options.n, delayMs: options.delayMs };
  if (options.mode === 'shared') {
    const shared = contender.create(config);
    return Array.from({ length: options.agents }, () => shared);
  }
  return Array.from({ length: options.agents }, () => contender.create(config));
}

/** Wall time and process CPU time (all threads) of one batch, in ms. */
async function wallOnce(contender: Contender, options: ConcurrencyOptions): Promise<{ wall: number; cpu: number }> {
  const all = runners(contender, options);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(all.map((runOnce) => runOnce()));
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { wall, cpu: (used.user + used.system) / 1000 };
}

const gc: (() => void) | undefined = (globalThis as { gc?: () => void }).gc;

/** Peak heap above the baseline while the agents run, sampled after full GCs, per agent. */
async function heapPerAgent(contender: Contender, options: ConcurrencyOptions): Promise<number | null> {
  if (gc === undefined) return null;
  gc();
  gc();
  const baseline = process.memoryUsage().heapUsed;
  const all = runners(contender, options);
  let finished = false;
  const done = Promise.all(all.map((runOnce) => runOnce())).then(() => {
    finished = true;
  });
  let peak = 0;
  const sample = () => {
    gc();
    peak = Math.max(peak, process.memoryUsage().heapUsed - baseline);
  };
  sample();
  while (!finished) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, options.delayMs * 2)));
    if (!finished) sample();
  }
  await done;
  return peak / 1024 / options.agents;
}

/**
 * Each result with {@link ConcurrencyResult.wallVsXstate} filled in from `groups`: in every
 * group that has both it and (b) (`xstate`, shared), the ratio of its median wall time to (b)'s.
 *
 * @example
 * ```ts
 * const merged = withPairedRatios(mergedResults, perProcessResults);
 * merged.find((r) => r.id === 'actorloop')?.wallVsXstate?.median;
 * ```
 */
export function withPairedRatios(results: readonly ConcurrencyResult[], groups: readonly (readonly ConcurrencyResult[])[]): ConcurrencyResult[] {
  return results.map((result) => {
    const ratios: number[] = [];
    for (const group of groups) {
      const mine = group.find((r) => r.id === result.id && r.mode === result.mode);
      const xstate = group.find((r) => r.id === 'xstate' && r.mode === 'shared');
      if (mine !== undefined && xstate !== undefined) ratios.push(mine.wallMs.median / xstate.wallMs.median);
    }
    return ratios.length === 0 ? result : { ...result, wallVsXstate: summarize(ratios) };
  });
}

/** One contender measured in one mode. */
export interface ConcurrencyEntry {
  readonly contender: Contender;
  readonly mode: ConcurrencyMode;
}

/** `id:mode`, e.g. `actorloop:perAgent`: how run.ts names an entry to measure alone. */
export const concurrencyKey = (entry: { readonly contender: { readonly id: string }; readonly mode: ConcurrencyMode } | ConcurrencyResult): string =>
  'contender' in entry ? `${entry.contender.id}:${entry.mode}` : `${entry.id}:${entry.mode}`;

/**
 * Measure every entry: one warm-up each, then `repeats` rounds in which the entries take turns
 * (so load drift on a shared machine hits them alike), then one heap pass each.
 *
 * @example
 * ```ts
 * const [r] = await measureConcurrency([{ contender: actorloop, mode: 'shared' }], { agents: 1000, n: 10, delayMs: 5, repeats: 5 });
 * console.log(r?.wallMs.median, r?.heapPerAgentKb);
 * ```
 */
export async function measureConcurrency(
  entries: readonly ConcurrencyEntry[],
  options: Omit<ConcurrencyOptions, 'mode'>,
): Promise<ConcurrencyResult[]> {
  const walls: number[][] = entries.map(() => []);
  const cpus: number[][] = entries.map(() => []);
  for (const entry of entries) await wallOnce(entry.contender, { ...options, mode: entry.mode });
  for (let round = 0; round < options.repeats; round++) {
    for (let k = 0; k < entries.length; k++) {
      // Rotate the order each round so no entry always follows the one that left the most garbage.
      const i = (round + k) % entries.length;
      const entry = entries[i] as ConcurrencyEntry;
      const { wall, cpu } = await wallOnce(entry.contender, { ...options, mode: entry.mode });
      (walls[i] as number[]).push(wall);
      (cpus[i] as number[]).push(cpu);
    }
  }
  const results: ConcurrencyResult[] = [];
  for (let i = 0; i < entries.length; i++) {
    const { contender, mode } = entries[i] as ConcurrencyEntry;
    results.push({
      id: contender.id,
      label: contender.label,
      mode,
      agents: options.agents,
      n: options.n,
      delayMs: options.delayMs,
      wallMs: summarize(walls[i] as number[]),
      cpuMs: summarize(cpus[i] as number[]),
      heapPerAgentKb: await heapPerAgent(contender, { ...options, mode }),
    });
  }
  return results;
}
