import { describe, expect, it } from 'vitest';
import { DEFAULT_PRICES, UsageTracker, costOf, priceOf } from '../../src/inference/index.ts';

const usage = (promptTokens: number, completionTokens: number) => ({ promptTokens, completionTokens, totalTokens: promptTokens + completionTokens });

describe('costOf', () => {
  it('prices prompt and completion tokens per million', () => {
    expect(costOf('gpt-4o-mini', usage(1_000_000, 0))).toBeCloseTo(0.15, 10);
    expect(costOf('gpt-4o', usage(200_000, 100_000))).toBeCloseTo(0.5 + 1, 10);
  });

  it('finds dated model ids and gateway-prefixed ids', () => {
    expect(priceOf('gpt-4o-mini-2024-07-18')).toBe(DEFAULT_PRICES['gpt-4o-mini']);
    expect(priceOf('openai/gpt-4.1-mini')).toBe(DEFAULT_PRICES['gpt-4.1-mini']);
    // A different model sharing a prefix is not silently priced as its neighbour.
    expect(priceOf('gpt-4o-mini-audio-preview')).toBeUndefined();
  });

  it('returns undefined for unknown models, including prototype keys', () => {
    for (const model of ['llama3.2', '__proto__', 'constructor', 'toString']) expect(costOf(model, usage(10, 10))).toBeUndefined();
  });

  it('uses a custom table', () => {
    expect(costOf('local', usage(1_000_000, 1_000_000), { local: { promptPerMillion: 0, completionPerMillion: 2 } })).toBe(2);
    expect(costOf('gpt-4o', usage(1, 1), {})).toBeUndefined();
  });
});

describe('UsageTracker', () => {
  it('accumulates tokens and cost across calls and counts unpriced ones', () => {
    const tracker = new UsageTracker();
    tracker.add({ usage: usage(10, 5), costUsd: 0.25 });
    tracker.add({ usage: usage(1, 2) });
    tracker.add({ usage: usage(100, 50), costUsd: 0.5 });
    expect(tracker.total).toEqual({ promptTokens: 111, completionTokens: 57, totalTokens: 168 });
    expect(tracker.costUsd).toBe(0.75);
    expect(tracker.calls).toBe(3);
    expect(tracker.unpricedCalls).toBe(1);
    expect(JSON.parse(JSON.stringify(tracker))).toEqual({ total: tracker.total, costUsd: 0.75, calls: 3, unpricedCalls: 1 });
  });

  it('starts at zero', () => {
    const tracker = new UsageTracker();
    expect(tracker.total).toEqual({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });
    expect(tracker.costUsd).toBe(0);
  });
});
