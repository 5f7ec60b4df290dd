import { describe, expect, it } from 'vitest';
import { OVERFLOW_FALLBACK_RATIO, OVERFLOW_MARGIN, createOverflowCompaction, overflowTarget } from '../../src/context/overflow.ts';
import { estimateTokens } from '../../src/context/estimate.ts';
import type { LoopEvent } from '../../src/core/loopEvent.ts';
import type { Message } from '../../src/core/messages.ts';
import { ContextLengthError } from '../../src/inference/errors.ts';

const context = (events: LoopEvent[] = []) => ({ runId: 'run_1', agentId: 'a', iteration: 0, signal: new AbortController().signal, emit: (event: LoopEvent) => void events.push(event) });

describe('the target of a compaction after a context-length error', () => {
  it('aims under the reported window less the reply, in the estimate\'s tokens', () => {
    // The server counted 3120 tokens where the estimate counts 3000.
    expect(overflowTarget({ limitTokens: 4097, promptTokens: 3120, completionTokens: 1000 }, 3000)).toBe(Math.floor(3097 * (3000 / 3120) * OVERFLOW_MARGIN));
    // Without the server's count, the window as is.
    expect(overflowTarget({ limitTokens: 1000, promptTokens: undefined, completionTokens: undefined }, 5000)).toBe(Math.floor(1000 * OVERFLOW_MARGIN));
  });

  it('takes half the failed request when the error states no window, or one it fits under already', () => {
    const none = { limitTokens: undefined, promptTokens: undefined, completionTokens: undefined };
    expect(overflowTarget(none, 5000)).toBe(5000 * OVERFLOW_FALLBACK_RATIO);
    // A window the estimate says the request fits is no guide (the estimate undercounts here).
    expect(overflowTarget({ limitTokens: 9000, promptTokens: undefined, completionTokens: undefined }, 5000)).toBe(2500);
    // The reply alone fills the window.
    expect(overflowTarget({ limitTokens: 1000, promptTokens: 900, completionTokens: 1000 }, 5000)).toBe(2500);
  });
});

describe('compacting the request that overflowed', () => {
  const turn = (i: number): Message[] => [
    { role: 'assistant', content: null, toolCalls: [{ id: `c${i}`, name: 'read', arguments: '{}' }] },
    { role: 'tool', toolCallId: `c${i}`, name: 'read', content: 'x'.repeat(2_000) },
  ];
  const long: Message[] = [{ role: 'user', content: 'task' }, ...[1, 2, 3, 4, 5, 6].flatMap(turn), { role: 'user', content: 'go on' }];

  it('brings the request under the target and reports it once, as context.overflowed', async () => {
    const events: LoopEvent[] = [];
    const error = new ContextLengthError('too long');
    const result = await createOverflowCompaction().afterOverflow(error, long, context(events));
    const before = estimateTokens(long);
    expect(result?.limit).toBe(Math.floor(before * OVERFLOW_FALLBACK_RATIO));
    expect(estimateTokens(result?.messages ?? [])).toBeLessThanOrEqual(result?.limit ?? 0);
    expect(result?.event).toMatchObject({ type: 'context.overflowed', tokensBefore: before, targetTokens: result?.limit, reason: error.message });
    // The budget's own event is folded into it, not emitted beside it.
    expect(events).toEqual([]);
  });

  it('gives up when compaction cannot make the request smaller (the error stands)', async () => {
    const one: Message[] = [{ role: 'user', content: 'y'.repeat(10_000) }];
    expect(await createOverflowCompaction().afterOverflow(new ContextLengthError('too long'), one, context())).toBeUndefined();
  });
});
