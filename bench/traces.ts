/**
 * Scenario 3f: what reading a run back as a trace costs. A react-100 run through actorloop (every
 * default on) journals its entries; the trace is built from them again and again. Traces are
 * built when asked for, from the journal the run writes anyway, so a run pays nothing for them:
 * the figure is the reader's cost, per iteration of the run it reads.
 */
import { buildTrace } from '../src/traces/trace.ts';
import { createAgent } from '../src/index.ts';
import { echoTool, scriptedProvider } from './scenarios/actorloop.ts';
import { TASK, newCounts } from './scenarios/react.ts';
import { summarize, type Summary } from './stats.ts';

export interface TraceResult {
  readonly n: number;
  readonly entries: number;
  /** Building the whole trace once, divided by the run's iterations, µs. */
  readonly perIterationUs: Summary;
}

/**
 * @example
 * ```ts
 * const r = await measureTraceBuilding({ n: 100, repeats: 200 });
 * r.perIterationUs.median;
 * ```
 */
export async function measureTraceBuilding(options: { readonly n: number; readonly repeats: number }): Promise<TraceResult> {
  const counts = newCounts();
  const agent = createAgent({ model: scriptedProvider({ n: options.n, delayMs: 0 }, counts), tools: [echoTool(counts)], limits: { maxIterations: options.n + 1 } });
  const result = await agent.run(TASK);
  const entries = agent.journal.entries(result.runId);
  agent.stop();
  const check = buildTrace(entries, result.runId);
  if (check?.steps.filter((step) => step.type === 'llm_call').length !== options.n) throw new Error('traces: the trace does not have one model step per iteration.');
  for (let i = 0; i < 20; i++) buildTrace(entries, result.runId);
  const samples: number[] = [];
  for (let i = 0; i < options.repeats; i++) {
    const started = performance.now();
    buildTrace(entries, result.runId);
    samples.push(((performance.now() - started) * 1000) / options.n);
  }
  return { n: options.n, entries: entries.length, perIterationUs: summarize(samples) };
}
