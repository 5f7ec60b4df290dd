/**
 * Many agents in flight at once, each running react-N against a model that takes `delayMs` per
 * call: wall time from the first start to the last answer (ideal: N × delayMs), process CPU, the
 * heap each in-flight agent retains (sampled after full GCs) and the peak heap (sampled without
 * GC, garbage included: what the process must have room for).
 *
 * Two ways to have 1 000 agents: `shared` — 1 000 concurrent runs of one definition (one
 * machine, agent or graph); `perAgent` — 1 000 separate definitions, the stricter case for memory.
 */
import { getHeapStatistics } from 'node:v8';
import { summarize, type Summary } from './stats.ts';
import { verifyCounts } from './scenarios/react.ts';
import type { Contender, Prepared } from './scenarios/types.ts';

export type ConcurrencyMode = 'shared' | 'perAgent';

export interface ConcurrencyEntry {
  readonly contender: Contender;
  readonly mode: ConcurrencyMode;
}

export interface ConcurrencyOptions {
  readonly agents: number;
  readonly n: number;
  readonly delayMs: number;
  /** Timed rounds after one warm-up batch each. */
  readonly rounds: number;
}

export interface ConcurrencyResult {
  readonly id: string;
  readonly label: string;
  readonly mode: ConcurrencyMode;
  readonly agents: number;
  readonly n: number;
  readonly delayMs: number;
  readonly wallMs: Summary;
  /** Process CPU of a batch (user + system, all threads, GC included), ms. */
  readonly cpuMs: Summary;
  /** Largest heap above the baseline while the agents run, after full GCs, per agent (KB); null without --expose-gc. */
  readonly retainedKbPerAgent: number | null;
  /** Largest heap above the baseline while the agents run, no GC forced, per agent (KB). */
  readonly peakKbPerAgent: number;
}

const gc: (() => void) | undefined = (globalThis as { gc?: () => void }).gc;
const heapUsed = (): number => getHeapStatistics().used_heap_size;
const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Build the batch's definitions and a promise of all its runs, checked against the call counts. */
function startBatch(entry: ConcurrencyEntry, options: ConcurrencyOptions): Promise<void> {
  const prepared = definitions(entry, options);
  const runs = entry.mode === 'shared' ? Array.from({ length: options.agents }, () => (prepared[0] as Prepared).run()) : prepared.map((p) => p.run());
  return Promise.all(runs).then(() => {
    const model = prepared.reduce((sum, p) => sum + p.counts.model, 0);
    const tool = prepared.reduce((sum, p) => sum + p.counts.tool, 0);
    verifyCounts(`${entry.contender.label} (${entry.mode})`, { model, tool }, options.agents, options.n);
  });
}

function definitions(entry: ConcurrencyEntry, options: ConcurrencyOptions): Prepared[] {
  const config = { n: options.n, delayMs: options.delayMs };
  const count = entry.mode === 'shared' ? 1 : options.agents;
  return Array.from({ length: count }, () => entry.contender.create(config));
}

async function timeBatch(entry: ConcurrencyEntry, options: ConcurrencyOptions): Promise<{ wall: number; cpu: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await startBatch(entry, options);
  const used = process.cpuUsage(cpu);
  return { wall: performance.now() - started, cpu: (used.user + used.system) / 1000 };
}

/** Heap above the baseline while a batch runs, largest sample per agent, KB; `collect` forces a full GC before each sample. */
async function heapPerAgent(entry: ConcurrencyEntry, options: ConcurrencyOptions, collect: boolean): Promise<number> {
  // Let the previous batch's background work (file appends, timers) finish, or freeing it
  // during this batch would hide what this batch holds.
  await tick(250);
  gc?.();
  gc?.();
  const baseline = heapUsed();
  let finished = false;
  let peak = 0;
  const sample = () => {
    if (collect) gc?.();
    peak = Math.max(peak, heapUsed() - baseline);
  };
  const done = startBatch(entry, options).finally(() => {
    finished = true;
  });
  sample();
  while (!finished) {
    await tick(collect ? Math.max(1, options.delayMs * 2) : 1);
    if (!finished) sample();
  }
  await done;
  return peak / 1024 / options.agents;
}

/**
 * One warm-up batch per entry, then `rounds` rounds in which the entries take turns (order
 * rotating), then a heap pass each.
 *
 * @example
 * ```ts
 * const [r] = await measureConcurrency([{ contender: actorloop, mode: 'shared' }], { agents: 1000, n: 10, delayMs: 5, rounds: 3 });
 * r?.wallMs.median;
 * ```
 */
export async function measureConcurrency(entries: readonly ConcurrencyEntry[], options: ConcurrencyOptions): Promise<ConcurrencyResult[]> {
  const walls: number[][] = entries.map(() => []);
  const cpus: number[][] = entries.map(() => []);
  for (const entry of entries) await timeBatch(entry, options);
  for (let round = 0; round < options.rounds; round++) {
    for (let k = 0; k < entries.length; k++) {
      const i = (round + k) % entries.length;
      const { wall, cpu } = await timeBatch(entries[i] as ConcurrencyEntry, options);
      (walls[i] as number[]).push(wall);
      (cpus[i] as number[]).push(cpu);
    }
  }
  const results: ConcurrencyResult[] = [];
  for (const [i, entry] of entries.entries()) {
    results.push({
      id: entry.contender.id,
      label: entry.contender.label,
      mode: entry.mode,
      agents: options.agents,
      n: options.n,
      delayMs: options.delayMs,
      wallMs: summarize(walls[i] as number[]),
      cpuMs: summarize(cpus[i] as number[]),
      retainedKbPerAgent: gc === undefined ? null : await heapPerAgent(entry, options, true),
      peakKbPerAgent: await heapPerAgent(entry, options, false),
    });
  }
  return results;
}
