import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyContextDelta } from '../../src/persistence/snapshotCodec.ts';
import { contextDelta } from './v5Codec.ts';

describe('snapshot context deltas', () => {
  it('keep the keys whose values changed by identity, never the messages', () => {
    const limits = { maxIterations: 10 };
    const previous = { runId: 'r', limits, iteration: 1, plan: [{ a: 1 }], messages: [] };
    const next = { runId: 'r', limits, iteration: 2, plan: [{ a: 1 }], messages: [] };
    // `plan` is an equal but new array: assign replaced it, so it is written again.
    expect(contextDelta(previous, next)).toEqual({ iteration: 2, plan: [{ a: 1 }] });
  });

  it('give up (whole snapshot) when a key disappeared or nothing stayed the same', () => {
    expect(contextDelta({ a: 1, b: 2 }, { a: 1 })).toBeUndefined();
    expect(contextDelta({ a: 1 }, { a: 2 })).toBeUndefined();
  });

  it('fold back to the next context for any pair of contexts (property)', () => {
    const value = fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }));
    const context = fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), value);
    fc.assert(
      fc.property(context, context, fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }), (base, changes, keepMask) => {
        // Build `next` from `previous` the way assign does: some values kept by identity, some replaced.
        const previous: Record<string, unknown> = { ...base, messages: [] };
        const next: Record<string, unknown> = { messages: [] };
        Object.keys(base).forEach((key, i) => {
          next[key] = keepMask[i] === true || !(key in changes) ? previous[key] : changes[key];
        });
        for (const [key, item] of Object.entries(changes)) if (!(key in next)) next[key] = item;
        const delta = contextDelta(previous, next);
        if (delta === undefined) return;
        const folded = applyContextDelta({ value: 'x', context: previous }, { value: 'y', context: delta });
        expect(folded).toEqual({ value: 'y', context: { ...next, messages: [] } });
      }),
      { numRuns: 300 },
    );
  });
});
