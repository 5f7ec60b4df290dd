/**
 * Scenario 3e: what lifecycle hooks cost per iteration. react-10 through actorloop with every
 * default on, without hooks, with one sync hook of each kind alone (a no-op that counts its
 * calls), and with all seven at once; the rounds rotate so drift hits every entry alike.
 */
import type { AgentHooks, HookName } from '../src/core/hooks.ts';
import { measureRounds, type IterationResult, type RoundOptions } from './method.ts';
import { echoTool, runAgent, scriptedProvider } from './scenarios/actorloop.ts';
import { newCounts, verifyCounts } from './scenarios/react.ts';
import type { Prepared } from './scenarios/types.ts';

export interface HooksResult {
  readonly n: number;
  /** `none`, one per hook name, and `all`. */
  readonly rows: readonly (IterationResult & { readonly hookCalls: number })[];
}

const KINDS: readonly HookName[] = ['onTurnStart', 'beforeModelCall', 'afterModelCall', 'beforeToolCall', 'afterToolCall', 'onTurnEnd', 'onError'];

/** Sync no-op hooks of the given kinds, each counting its calls into `calls`. */
function countingHooks(kinds: readonly HookName[], calls: { count: number }): AgentHooks {
  const hooks: Record<string, () => undefined> = {};
  for (const kind of kinds) {
    hooks[kind] = () => {
      calls.count++;
      return undefined;
    };
  }
  return hooks as AgentHooks;
}

function entry(id: string, kinds: readonly HookName[], n: number): { id: string; label: string; prepared: Prepared; calls: { count: number } } {
  const counts = newCounts();
  const calls = { count: 0 };
  const hooks = kinds.length === 0 ? {} : { hooks: countingHooks(kinds, calls) };
  const run = runAgent({ model: scriptedProvider({ n, delayMs: 0 }, counts), tools: [echoTool(counts)], limits: { maxIterations: n + 1 }, ...hooks }, id);
  return { id, label: id, prepared: { counts, run }, calls };
}

/**
 * @example
 * ```ts
 * const r = await measureHooks({ n: 10, rounds: 10, runsPerRound: 20, warmupRuns: 50 });
 * r.rows.find((row) => row.id === 'all')?.perIterationUs.median;
 * ```
 */
export async function measureHooks(options: RoundOptions): Promise<HooksResult> {
  const entries = [entry('none', [], options.n), ...KINDS.map((kind) => entry(kind, [kind], options.n)), entry('all', KINDS, options.n)];
  const results = await measureRounds(entries, options);
  const rows = results.map((result, i) => {
    const { prepared, calls, id } = entries[i] as (typeof entries)[number];
    verifyCounts(id, prepared.counts, result.runs, options.n);
    // onError never runs in a run that succeeds; every other hook must have run.
    if (id !== 'none' && id !== 'onError' && calls.count === 0) throw new Error(`${id}: the hook never ran.`);
    return { ...result, hookCalls: calls.count };
  });
  return { n: options.n, rows };
}
