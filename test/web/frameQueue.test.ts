/** What a stream holds for a slow reader, and which ended runs a handler keeps. */
import { describe, expect, it } from 'vitest';
import { agUiProtocol } from '../../src/web/agUi.ts';
import { aiSdkProtocol } from '../../src/web/aiSdk.ts';
import { EndedRuns } from '../../src/web/endedRuns.ts';
import { FrameQueue } from '../../src/web/frameQueue.ts';

const dataOf = (chunk: string) =>
  chunk
    .split('\n\n')
    .filter((frame) => frame !== '')
    .map((frame) => ({ id: /^id: (.*)$/m.exec(frame)?.[1], data: JSON.parse(/^data: (.*)$/m.exec(frame)?.[1] ?? 'null') as Record<string, unknown> }));

describe('the events waiting for a reader', () => {
  it("joins a message's consecutive text deltas into one event under the last delta's id, and nothing else", () => {
    const queue = new FrameQueue(agUiProtocol);
    queue.push('1.0', { type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant' } as never);
    for (const [i, delta] of ['Hel', 'lo', ', ', 'world'].entries()) queue.push(`${2 + i}.0`, { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta } as never);
    queue.push('6.0', { type: 'TEXT_MESSAGE_CONTENT', messageId: 'other', delta: '!' } as never);
    // An event without an id is never joined: a page reconnecting could not say it had it.
    queue.push(undefined, { type: 'TEXT_MESSAGE_CONTENT', messageId: 'other', delta: '?' } as never);
    expect(queue.waiting).toBe(true);
    expect(dataOf(queue.take())).toEqual([
      { id: '1.0', data: { type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant' } },
      { id: '5.0', data: { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'Hello, world' } },
      { id: '6.0', data: { type: 'TEXT_MESSAGE_CONTENT', messageId: 'other', delta: '!' } },
      { id: undefined, data: { type: 'TEXT_MESSAGE_CONTENT', messageId: 'other', delta: '?' } },
    ]);
    expect(queue.waiting).toBe(false);
    expect(queue.take()).toBe('');
  });

  it('joins AI SDK text and reasoning deltas of one part, not across parts or kinds', () => {
    const queue = new FrameQueue(aiSdkProtocol);
    queue.push('1.0', { type: 'reasoning-delta', id: 'r', delta: 'think' } as never);
    queue.push('2.0', { type: 'reasoning-delta', id: 'r', delta: 'ing' } as never);
    queue.push('3.0', { type: 'text-delta', id: 'r', delta: 'a' } as never);
    queue.push('4.0', { type: 'text-delta', id: 't', delta: 'b' } as never);
    queue.push('5.0', { type: 'text-delta', id: 't', delta: 'c' } as never);
    expect(dataOf(queue.take()).map(({ id, data }) => [id, data.type, data.delta])).toEqual([
      ['2.0', 'reasoning-delta', 'thinking'],
      ['3.0', 'text-delta', 'a'],
      ['5.0', 'text-delta', 'bc'],
    ]);
  });
});

describe('the ended runs a handler keeps', () => {
  it('forgets the runs that ended first once more than it keeps have ended, and counts a resumed run when it ends again', () => {
    const kept = new EndedRuns(2);
    expect(kept.ended('a')).toEqual([]);
    expect(kept.ended('b')).toEqual([]);
    expect(kept.ended('c')).toEqual(['a']);
    kept.live('b');
    expect(kept.ended('d')).toEqual([]);
    expect(kept.ended('b')).toEqual(['c']);
    expect(kept.ended('e')).toEqual(['d']);
  });
});
