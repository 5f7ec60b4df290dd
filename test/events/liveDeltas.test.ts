/**
 * Which streamed deltas of a durable worker's call a follower shows: from the call's first notice, or
 * from a catch-up (the call's text so far, sent again for late joiners), never any text twice.
 */
import { describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import { LiveCalls } from '../../src/events/liveDeltas.ts';
import { HeldCalls } from '../../src/postgres/tokens.ts';

const base = { sequence: 4, timestamp: 0, agentId: 'a', runId: 'r', iteration: 0 };
const delta = (part: number, text: string, catchUp = false): JournalEntry => ({
  ...base,
  event: { type: 'token.delta', delta: text, live: { call: 'c', part, ...(catchUp ? { catchUp: true as const } : {}) } },
});
const committed = (sequence: number): JournalEntry => ({ ...base, sequence, event: { type: 'phase.entered', phase: 'reason' } });
const shown = (calls: LiveCalls, entries: readonly JournalEntry[]): string =>
  entries
    .filter((entry) => calls.admit(entry))
    .map((entry) => (entry.event.type === 'token.delta' ? entry.event.delta : '|'))
    .join('');

describe('a follower of streamed calls', () => {
  it('that has the call from its start skips a catch-up sent for a late joiner', () => {
    expect(shown(new LiveCalls(), [delta(0, 'ab'), delta(1, 'cd'), delta(2, 'abcd', true), delta(2, 'ef'), delta(3, 'g')])).toBe('abcdefg');
  });

  it('that joined mid-call takes the catch-up, in pieces, and goes on live from the part it precedes', () => {
    expect(shown(new LiveCalls(), [delta(1, 'cd'), delta(2, 'ab', true), delta(2, 'cd', true), delta(2, 'ef'), delta(3, 'g'), delta(4, 'abcdefg', true)])).toBe('abcdefg');
  });

  it('that lost a notice after showing some of the call takes no catch-up: the reply brings the rest', () => {
    expect(shown(new LiveCalls(), [delta(0, 'ab'), delta(2, 'ef'), delta(3, 'abcdef', true), delta(3, 'g')])).toBe('ab');
  });

  it('takes no catch-up once the run went past the call', () => {
    expect(shown(new LiveCalls(), [delta(1, 'cd'), committed(6), delta(2, 'abcd', true)])).toBe('|');
  });
});

describe("a process's held calls, for subscribers that join mid-call", () => {
  const replay = (held: HeldCalls): string => shown(new LiveCalls(), held.entries());

  it('are the call from its start until its run commits an entry', () => {
    const held = new HeldCalls();
    for (const entry of [delta(0, 'ab'), delta(1, 'cd'), delta(2, 'abcd', true), delta(2, 'ef')]) held.pass(entry);
    expect(replay(held)).toBe('abcdef');
    held.pass(committed(6));
    expect(held.entries()).toEqual([]);
  });

  it('start from a catch-up when this process joined the call late, and hold nothing after a gap', () => {
    const late = new HeldCalls();
    for (const entry of [delta(1, 'cd'), delta(2, 'abcd', true), delta(2, 'ef'), delta(3, 'g')]) late.pass(entry);
    expect(replay(late)).toBe('abcdefg');
    const gap = new HeldCalls();
    for (const entry of [delta(0, 'ab'), delta(2, 'ef')]) gap.pass(entry);
    expect(gap.entries()).toEqual([]);
  });
});
