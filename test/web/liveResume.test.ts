/**
 * A durable run's model call streams to followers as live deltas, in no journal. Their events carry the
 * committed cursor and how much of the live message the page has (`12.3.t457`): a page that reconnects
 * with it gets the rest of that message, from the call's catch-up or from the journal's reply, and the
 * stock clients (`@ag-ui/client`, the AI SDK's `readUIMessageStream`) build what an unbroken stream builds.
 */
import type { BaseEvent } from '@ag-ui/core';
import fc from 'fast-check';
import { from, Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { JournalEntry, LoopEvent } from '../../src/core/loopEvent.ts';
import { AgUiEncoder, NO_DETAILS, type RunView } from '../../src/events/agUiEncoder.ts';
import { agUiProtocol } from '../../src/web/agUi.ts';
import { aiSdkProtocol, type AiSdkChunk } from '../../src/web/aiSdk.ts';
import { WebRequestError } from '../../src/web/errors.ts';
import type { WebProtocol } from '../../src/web/protocol.ts';
import { parseEventId, sseBody, type EventCursor } from '../../src/web/sse.ts';
import { agUiMessagesOf, messageOf } from './support.ts';

const RUN = 'run-durable';
const view: RunView = { runId: RUN, threadId: 'thread', details: NO_DETAILS };
const usage = { promptTokens: 1, completionTokens: 2, totalTokens: 3 };
const at = (sequence: number, event: LoopEvent): JournalEntry => ({ sequence, timestamp: 0, agentId: 'a', runId: RUN, iteration: 0, event });
const live = (sequence: number, call: string, part: number, type: 'token.delta' | 'thinking.delta', delta: string, catchUp = false): JournalEntry =>
  at(sequence, { type, delta, live: { call, part, ...(catchUp ? { catchUp: true as const } : {}) } });
const isLive = (entry: JournalEntry): boolean => (entry.event.type === 'token.delta' || entry.event.type === 'thinking.delta') && entry.event.live !== undefined;

interface Call {
  readonly thinking: readonly string[];
  readonly text: readonly string[];
}

/** What a follower that was there from the start gets: committed entries, each call's live deltas before its reply. */
function timeline(calls: readonly Call[]): JournalEntry[] {
  const entries: JournalEntry[] = [at(0, { type: 'run.started', task: 'Count.', model: 'm', tools: [] })];
  let sequence = 1;
  calls.forEach((call, index) => {
    const key = `${RUN}:model:${index}:0`;
    const started = sequence++;
    entries.push(at(started, { type: 'phase.entered', phase: 'reason' }));
    let part = 0;
    for (const delta of call.thinking) entries.push(live(started, key, part++, 'thinking.delta', delta));
    for (const delta of call.text) entries.push(live(started, key, part++, 'token.delta', delta));
    const reasoning = call.thinking.join('');
    entries.push(at(sequence++, { type: 'reasoning.completed', text: call.text.join(''), toolCalls: [], usage, call: key, ...(reasoning === '' ? {} : { reasoning }) }));
  });
  entries.push(at(sequence, { type: 'run.terminated', reason: 'final_answer', iterations: calls.length, usage }));
  return entries;
}

/**
 * What a follower that subscribes at `time` gets: the committed entries so far; for a call then streaming, its
 * text so far again (`catchUp`) and its next deltas, or else none of them (its reply brings the text); then the rest.
 */
function followerAt(entries: readonly JournalEntry[], time: number, catchUp: boolean): JournalEntry[] {
  const before = entries.slice(0, time);
  const lastCommitted = before.findLastIndex((entry) => !isLive(entry));
  const streaming = before.slice(lastCommitted + 1);
  const committed = before.filter((entry) => !isLive(entry));
  const rest = entries.slice(time);
  if (streaming.length === 0) return [...committed, ...rest];
  const call = (streaming[0]?.event as { live: { call: string } }).live.call;
  if (!catchUp) return [...committed, ...rest.filter((entry) => !isLive(entry) || (entry.event as { live: { call: string } }).live.call !== call)];
  const sequence = streaming[0]?.sequence ?? 0;
  const so = (type: string) => streaming.flatMap((entry) => (entry.event.type === type ? [(entry.event as { delta: string }).delta] : [])).join('');
  const part = streaming.length;
  const caught = [
    ...(so('thinking.delta') === '' ? [] : [live(sequence, call, part, 'thinking.delta', so('thinking.delta'), true)]),
    ...(so('token.delta') === '' ? [] : [live(sequence, call, part, 'token.delta', so('token.delta'), true)]),
  ];
  return [...committed, ...caught, ...rest];
}

interface Frame {
  readonly id: string | undefined;
  readonly raw: string;
}

/**
 * The frames `sseBody` sends for `entries`; `paced`: one entry a turn, so deltas are rarely joined. A stream
 * that follows its feed again (its reader fell `maxAhead` behind) gets what a new follower then gets, `again`.
 */
async function framesOf<TEvent>(protocol: WebProtocol<TEvent>, entries: readonly JournalEntry[], after: EventCursor | undefined, paced: boolean, maxAhead?: number, again = entries): Promise<Frame[]> {
  let subscriptions = 0;
  const feed = new Observable<JournalEntry>((subscriber) => {
    const given = subscriptions++ === 0 ? entries : again;
    if (!paced) return from(given).subscribe(subscriber);
    let next = 0;
    const timer = setInterval(() => (next < given.length ? subscriber.next(given[next++] as JournalEntry) : subscriber.complete()), 0);
    return () => clearInterval(timer);
  });
  const text = await new Response(sseBody(feed, () => protocol.encoder(view), protocol, after, new AbortController().signal, maxAhead)).text();
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((raw) => ({ id: /^id: (.+)$/m.exec(raw)?.[1], raw: `${raw}\n\n` }));
}

const agUiEvents = (frames: readonly Frame[]): BaseEvent[] => frames.map((frame) => JSON.parse(/^data: (.+)$/m.exec(frame.raw)?.[1] ?? '{}') as BaseEvent);
const aiSdkMessage = (frames: readonly Frame[]) => messageOf(new Response(frames.map((frame) => frame.raw).join('')));

const words = (text: string) => text.split(/(?<= )/);
const CALLS: Call[] = [
  { thinking: words('Counting to five slowly. '), text: words('one two three four five.') },
  { thinking: [], text: words('And that is all there is to it.') },
];

describe('an event id with a live mark', () => {
  it('is read with its mark (text characters, reasoning characters, or both), and refused with a 400 and a one-line reason when malformed', () => {
    expect(parseEventId('12.3')).toEqual({ sequence: 12, index: 3 });
    expect(parseEventId('12.3.t457')).toEqual({ sequence: 12, index: 3, mark: { text: 457 } });
    expect(parseEventId('12.3.r20')).toEqual({ sequence: 12, index: 3, mark: { reasoning: 20 } });
    expect(parseEventId('12.3.r20t457')).toEqual({ sequence: 12, index: 3, mark: { reasoning: 20, text: 457 } });
    expect(parseEventId('12.3.r20e')).toEqual({ sequence: 12, index: 3, mark: { reasoning: 20, ended: true } });
    for (const bad of ['12.3.', '12.3.t', '12.3.x5', '12.3.t5r2', '12.3.t5.t6', '12.3.r-1', '12.t5', '12.3.e', '12.3.r20et4', '12.3.t4e']) {
      let error: unknown;
      try {
        parseEventId(bad);
      } catch (caught) {
        error = caught;
      }
      expect(error, bad).toBeInstanceOf(WebRequestError);
      expect((error as WebRequestError).status).toBe(400);
      expect((error as Error).message).not.toContain('\n');
    }
  });
});

describe('an encoder resuming a live message', () => {
  const entries = timeline([{ thinking: ['hmm '], text: ['one ', 'two ', 'three'] }]);
  const reply = entries.find((entry) => entry.event.type === 'reasoning.completed') as JournalEntry;
  const call = `${RUN}:model:0:0`;

  it('AG-UI: the journal’s reply goes on after the characters the page has, without a start, then ends the message', () => {
    const encoder = new AgUiEncoder(view);
    for (const entry of entries.filter((e) => !isLive(e) && e.sequence < reply.sequence)) encoder.encode(entry);
    encoder.resume({ text: 5 });
    const events = encoder.encode(reply).filter((event) => event !== undefined);
    expect(events).toEqual([
      { type: 'TEXT_MESSAGE_CONTENT', messageId: call, delta: 'wo three' },
      { type: 'TEXT_MESSAGE_END', messageId: call },
    ]);
  });

  it('AG-UI: the call’s catch-up goes on after the characters the page has, and its mark counts them', () => {
    const encoder = new AgUiEncoder(view);
    for (const entry of entries.filter((e) => !isLive(e) && e.sequence < reply.sequence)) encoder.encode(entry);
    encoder.resume({ text: 5 });
    expect(encoder.encode(live(1, call, 3, 'token.delta', 'one two ', true))).toEqual([{ type: 'TEXT_MESSAGE_CONTENT', messageId: call, delta: 'wo ' }]);
    expect(encoder.mark()).toEqual({ text: 8 });
    expect(encoder.encode(live(1, call, 4, 'token.delta', 'three'))).toEqual([{ type: 'TEXT_MESSAGE_CONTENT', messageId: call, delta: 'three' }]);
    expect(encoder.encode(reply).filter((event) => event !== undefined)).toEqual([{ type: 'TEXT_MESSAGE_END', messageId: call }]);
  });

  it('AI SDK: the reply’s reasoning the page had ended is not sent again, its text goes on after the page’s characters', () => {
    const encoder = aiSdkProtocol.encoder(view);
    for (const entry of entries.filter((e) => !isLive(e) && e.sequence < reply.sequence)) encoder.encode(entry);
    encoder.resume?.({ reasoning: 4, text: 4 });
    const chunks = encoder.encode(reply).filter((chunk): chunk is AiSdkChunk => chunk !== undefined);
    expect(chunks).toEqual([
      { type: 'text-delta', id: `text:${call}`, delta: 'two three' },
      { type: 'text-end', id: `text:${call}` },
    ]);
  });

  it('AI SDK: a page that had part of the reasoning gets its rest, its end, then the text whole', () => {
    const encoder = aiSdkProtocol.encoder(view);
    for (const entry of entries.filter((e) => !isLive(e) && e.sequence < reply.sequence)) encoder.encode(entry);
    encoder.resume?.({ reasoning: 2 });
    const chunks = encoder.encode(reply).filter((chunk): chunk is AiSdkChunk => chunk !== undefined);
    expect(chunks).toEqual([
      { type: 'reasoning-delta', id: `reasoning:${call}`, delta: 'm ' },
      { type: 'reasoning-end', id: `reasoning:${call}` },
      { type: 'text-start', id: `text:${call}` },
      { type: 'text-delta', id: `text:${call}`, delta: 'one two three' },
      { type: 'text-end', id: `text:${call}` },
    ]);
  });

  it('gives the reply’s events the ids the journal alone gives them, however much of the call streamed live', () => {
    for (const protocol of [agUiProtocol, aiSdkProtocol] as WebProtocol<unknown>[]) {
      const places = (stream: readonly JournalEntry[], resume?: Parameters<NonNullable<ReturnType<typeof protocol.encoder>['resume']>>[0]) => {
        const encoder = protocol.encoder(view);
        let out: unknown[] = [];
        for (const entry of stream) {
          if (entry === reply && resume !== undefined) encoder.resume?.(resume);
          const events = encoder.encode(entry);
          if (entry === reply) out = events;
        }
        return out.length;
      };
      const journal = entries.filter((e) => !isLive(e));
      expect(places(entries)).toBe(places(journal));
      expect(places(journal, { reasoning: 4, text: 6 })).toBe(places(journal));
    }
  });
});

describe('a page that reconnects to a durable run with the id of the last event it had', () => {
  const entries = timeline(CALLS);
  const unbrokenAgUi = async () => agUiMessagesOf(agUiEvents(await framesOf(agUiProtocol, entries, undefined, false)));
  const unbrokenAiSdk = async () => aiSdkMessage(await framesOf(aiSdkProtocol, entries, undefined, false));

  it('gives live events an id: the committed cursor and the characters of the live message the page has', async () => {
    const frames = await framesOf(aiSdkProtocol, entries.slice(0, 8), undefined, true);
    const ids = frames.flatMap((frame) => (frame.id === undefined ? [] : [frame.id]));
    // A part's start and the reasoning's end carry theirs too: `r0` (reasoning started), `r25e` (ended, no text yet), `r25t0`.
    expect(ids.filter((id) => id.split('.').length === 3)).toEqual(['1.1.r0', '1.1.r9', '1.1.r12', '1.1.r17', '1.1.r25', '1.1.r25e', '1.1.r25t0', '1.1.r25t4', '1.1.r25t8']);
  });

  // Drops after any event, also between two events of one live entry (a start, then its text): each carries an id.
  const drops = fc.record({
    time: fc.integer({ min: 1, max: entries.length }),
    later: fc.integer({ min: 0, max: entries.length }),
    cut: fc.nat(),
    catchUp: fc.boolean(),
    paced: fc.boolean(),
    // A reader this many entries behind has the run followed again from its start.
    ahead: fc.constantFrom(undefined, 3),
  });

  for (const [name, protocol, build] of [
    ['AG-UI (@ag-ui/client)', agUiProtocol, async (frames: Frame[]) => agUiMessagesOf(agUiEvents(frames))],
    ['AI SDK (readUIMessageStream)', aiSdkProtocol, aiSdkMessage],
  ] as const) {
    it(`${name}: builds the unbroken stream's messages wherever it dropped and whenever it came back`, { timeout: 60_000 }, async () => {
      const unbroken = protocol === agUiProtocol ? await unbrokenAgUi() : await unbrokenAiSdk();
      await fc.assert(
        fc.asyncProperty(drops, async ({ time, later, cut, catchUp, paced, ahead }) => {
          const got = await framesOf(protocol as WebProtocol<unknown>, entries.slice(0, time), undefined, paced, ahead, followerAt(entries.slice(0, time), time, catchUp));
          const ends = got.map((_, index) => index + 1);
          const had = got.slice(0, ends[cut % ends.length]);
          const back = Math.min(entries.length, time + later);
          const after = parseEventId(had.findLast((frame) => frame.id !== undefined)?.id ?? null);
          const rest = await framesOf(protocol as WebProtocol<unknown>, followerAt(entries, back, catchUp), after, paced, ahead, followerAt(entries, entries.length, catchUp));
          expect(await (build as (frames: Frame[]) => Promise<unknown>)([...had, ...rest])).toEqual(unbroken);
          // No part started twice (AG-UI's reducer would let a second start pass).
          const starts = agUiEvents([...had, ...rest]).flatMap((event) => {
            const { type, messageId, id } = event as BaseEvent & { messageId?: string; id?: string };
            return ['TEXT_MESSAGE_START', 'text-start', 'reasoning-start'].includes(type) ? [`${type} ${messageId ?? id}`] : [];
          });
          expect(starts).toEqual([...new Set(starts)]);
        }),
        { numRuns: 150 },
      );
    });
  }
});
