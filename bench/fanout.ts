/**
 * Scenario 3b: strategy fan-out. A vote over five sub-agent branches whose scripted models
 * answer after 20, 40, 60, 80 and 100 ms, all allowed to run at once: the run should take about
 * as long as the slowest branch (100 ms), not the sum (300 ms).
 */
import { runStrategy } from '../src/strategies/runStrategy.ts';
import { strategies } from '../src/strategies/index.ts';
import { scriptedModel } from '../src/testing/scriptedModel.ts';
import { summarize, type Summary } from './stats.ts';

export interface FanOutResult {
  readonly branches: number;
  readonly branchDelaysMs: readonly number[];
  readonly slowestMs: number;
  readonly sumMs: number;
  readonly wallMs: Summary;
}

const USAGE = { promptTokens: 1, completionTokens: 1, totalTokens: 2 } as const;

/**
 * @example
 * ```ts
 * const r = await measureFanOut({ repeats: 5 });
 * r.wallMs.median / r.slowestMs; // ≈ 1
 * ```
 */
export async function measureFanOut(options: { readonly repeats: number }): Promise<FanOutResult> {
  const delays = [20, 40, 60, 80, 100];
  const once = async (): Promise<number> => {
    const started = performance.now();
    const result = await runStrategy({
      strategy: strategies.vote({ samples: delays.length }),
      task: 'Answer 42.',
      concurrency: delays.length,
      subAgent: (_branch, info) => ({
        model: scriptedModel([{ text: '42', usage: USAGE, delayMs: delays[info.index] ?? 0 }], { recordCalls: false }),
      }),
    });
    const wall = performance.now() - started;
    if (result.text !== '42') throw new Error(`fan-out: expected the answer 42, got ${JSON.stringify(result.text)} (${result.reason}).`);
    return wall;
  };
  await once();
  const walls: number[] = [];
  for (let i = 0; i < options.repeats; i++) walls.push(await once());
  return {
    branches: delays.length,
    branchDelaysMs: delays,
    slowestMs: Math.max(...delays),
    sumMs: delays.reduce((a, b) => a + b, 0),
    wallMs: summarize(walls),
  };
}
