/**
 * A streamed token that continues the text delta waiting for the reader is added to it as text
 * alone (`continueText`): the stream's bytes are those of encoding every token as its own event.
 */
import fc from 'fast-check';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { JournalEntry, LoopEvent } from '../../src/core/loopEvent.ts';
import { NO_DETAILS } from '../../src/events/agUiEncoder.ts';
import { agUiProtocol } from '../../src/web/agUi.ts';
import { aiSdkProtocol } from '../../src/web/aiSdk.ts';
import type { StreamEncoder, WebProtocol } from '../../src/web/protocol.ts';
import { sseBody } from '../../src/web/sse.ts';

const entryOf = (sequence: number, event: LoopEvent): JournalEntry => ({ sequence, timestamp: 0, agentId: 'agent', runId: 'run-lane', iteration: 0, event });

/** What the reader gets when it reads once after each batch of entries, then to the end after `tail` and the run's end. */
async function streamOf<TEvent>(protocol: WebProtocol<TEvent>, batches: readonly (readonly LoopEvent[])[], tail: readonly LoopEvent[], lane: boolean): Promise<{ chunks: string[]; continued: number }> {
  const feed = new Subject<JournalEntry>();
  let continued = 0;
  const encoderFor = (): StreamEncoder<TEvent> => {
    const inner = protocol.encoder({ runId: 'run-lane', threadId: 'thread', details: NO_DETAILS });
    const counted = (entry: JournalEntry) => {
      const text = inner.continueText?.(entry);
      if (text !== undefined) continued++;
      return text;
    };
    // Without `continueText` every token is encoded as its own event and joined when framed.
    return { encode: (entry) => inner.encode(entry), failure: (message, code) => inner.failure(message, code), ...(lane ? { continueText: counted } : {}) };
  };
  const body = sseBody(feed, encoderFor, protocol, undefined, new AbortController().signal);
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const chunks: string[] = [];
  let sequence = 0;
  for (const batch of batches) {
    for (const event of batch) feed.next(entryOf(sequence++, event));
    const { value } = await reader.read();
    chunks.push(decoder.decode(value));
  }
  for (const event of tail) feed.next(entryOf(sequence++, event));
  feed.next(entryOf(sequence, { type: 'run.terminated', reason: 'final_answer', iterations: 1, usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 } }));
  feed.complete();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(decoder.decode(value));
  }
  return { chunks, continued };
}

/** Entries a reply streams while the reader waits: tokens (some empty), thinking, a phase; each batch ends with a token or thinking. */
const batch = fc
  .tuple(
    fc.array(
      fc.oneof(
        fc.string({ maxLength: 4 }).map((delta): LoopEvent => ({ type: 'token.delta', delta })),
        fc.string({ minLength: 1, maxLength: 3 }).map((delta): LoopEvent => ({ type: 'thinking.delta', delta })),
        fc.constant<LoopEvent>({ type: 'phase.entered', phase: 'reason' }),
      ),
      { maxLength: 8 },
    ),
    fc.oneof(fc.string({ minLength: 1, maxLength: 4 }).map((delta): LoopEvent => ({ type: 'token.delta', delta })), fc.constant<LoopEvent>({ type: 'thinking.delta', delta: '…' })),
  )
  .map(([events, last]) => [...events, last]);

const start: LoopEvent[] = [
  { type: 'run.started', task: 'Talk', model: 'scripted', tools: [] },
  { type: 'phase.entered', phase: 'reason' },
];

describe('tokens added to the waiting text delta as text', () => {
  it('sends the same bytes as encoding each token on its own, for AG-UI and the AI SDK, however tokens, thinking and steps interleave', { timeout: 60_000 }, async () => {
    for (const protocol of [agUiProtocol, aiSdkProtocol] as WebProtocol<unknown>[]) {
      await fc.assert(
        fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 5 }), async (batches) => {
          const reply = batches.flat().flatMap((event) => (event.type === 'token.delta' ? [event.delta] : []));
          const all = [[...start, ...(batches[0] ?? [])], ...batches.slice(1)];
          const tail: LoopEvent[] = [{ type: 'reasoning.completed', text: reply.join(''), toolCalls: [], usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 } }];
          const [joined, each] = await Promise.all([streamOf(protocol, all, tail, true), streamOf(protocol, all, tail, false)]);
          expect(joined.chunks).toEqual(each.chunks);
        }),
        { numRuns: 150 },
      );
    }
  });

  it('takes a run of tokens as text alone, one event on the wire, under the last token\'s id', async () => {
    const tokens: LoopEvent[] = ['Hel', 'lo', ', ', 'world'].map((delta) => ({ type: 'token.delta', delta }));
    const { chunks, continued } = await streamOf(agUiProtocol, [[...start, ...tokens]], [], true);
    // The first token opens the message and is an event; the three after it continue it.
    expect(continued).toBe(3);
    expect(chunks[0]).toContain('id: 5.0\ndata: {"type":"TEXT_MESSAGE_CONTENT","messageId":"run-lane:2","delta":"Hello, world"}\n\n');
  });
});
