/**
 * A model and tools that answer in microtasks never let the event loop reach its timers on their
 * own. Runs yield a macrotask when the loop has been busy too long, so a wall-clock limit (a
 * timer) still ends a runaway run, other timers still fire, and many runs yielding together all
 * go on.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/agent/createAgent.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';

const count = defineTool({ name: 'count', description: 'Echo a number', input: z.object({ i: z.number() }), execute: ({ i }) => i });

/** Never answers: always one more instant call with a new argument (so no stuck detection). */
const endless = () => {
  let i = 0;
  return scriptedModel(() => ({ toolCalls: [{ name: 'count', arguments: { i: i++ } }] }), { recordCalls: false });
};

describe('runs with instant models and tools', () => {
  it('still end on their wall-clock limit, and let other timers fire meanwhile', { timeout: 30_000 }, async () => {
    // No token limit either: a fast loop spends the default budget before the limit. A second, so a loaded machine still runs many iterations in it.
    const agent = createAgent({ model: endless(), tools: [count], limits: { maxIterations: 1_000_000, maxTotalTokens: Number.MAX_SAFE_INTEGER, timeoutMs: 1_000 } });
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    const started = performance.now();
    try {
      const result = await agent.start('count forever').settled;
      expect(result.reason).toBe('timeout');
      expect(performance.now() - started).toBeLessThan(15_000);
      expect(result.iterations).toBeGreaterThan(10);
      expect(ticks).toBeGreaterThan(2);
    } finally {
      clearInterval(ticker);
    }
  });

  it('yielding together, all go on and all end on their limits', { timeout: 30_000 }, async () => {
    const agent = createAgent({ model: endless(), tools: [count], limits: { maxIterations: 1_000_000, maxTotalTokens: Number.MAX_SAFE_INTEGER, timeoutMs: 1_000 } });
    const results = await Promise.all(Array.from({ length: 25 }, (_, k) => agent.start(`count ${k}`).settled));
    expect(results.map((r) => r.reason)).toEqual(Array.from({ length: 25 }, () => 'timeout'));
    for (const result of results) expect(result.iterations).toBeGreaterThan(1);
  });
});
