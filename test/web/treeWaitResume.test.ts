/**
 * A sub-run's wait ends a tree's response while the lead's message streams; the page's answer opens the next
 * response, which opens the lead's parts again before its next event. A page that drops anywhere in that next
 * response and reconnects with the id of the last event it had builds, with the stock clients, what an unbroken
 * page builds: no part opened twice, none left open that the unbroken stream closes.
 */
import type { BaseEvent } from '@ag-ui/core';
import fc from 'fast-check';
import { defer, from } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { UIMessage } from 'ai';
import type { JournalEntry, LoopEvent } from '../../src/core/loopEvent.ts';
import { NO_DETAILS } from '../../src/events/agUiEncoder.ts';
import { agUiProtocol } from '../../src/web/agUi.ts';
import { aiSdkProtocol } from '../../src/web/aiSdk.ts';
import type { SubRun, WebProtocol } from '../../src/web/protocol.ts';
import type { TreeEntry } from '../../src/web/runTree.ts';
import { parseTreeEventId, treeSseBody, type TreeCursor } from '../../src/web/treeSse.ts';
import { agUiMessagesOf, messageOf } from './support.ts';

const LEAD = 'run-lead';
const HELPER: SubRun = { runId: 'run-helper', agentId: 'helper', parentRunId: LEAD };
const CALL = `${LEAD}:model:0:0`;
const usage = { promptTokens: 1, completionTokens: 2, totalTokens: 3 };
const WORDS = 'The helper asks first, and I go on talking meanwhile until it is done.'.split(/(?<= )/);

const entryOf = (runId: string, sequence: number, event: LoopEvent): JournalEntry => ({ sequence, timestamp: 0, agentId: runId === LEAD ? 'lead' : 'helper', runId, iteration: 0, event });
const lead = (sequence: number, event: LoopEvent): TreeEntry => ({ key: '', entry: entryOf(LEAD, sequence, event) });
const helper = (sequence: number, event: LoopEvent): TreeEntry => ({ key: '1', entry: entryOf(HELPER.runId, sequence, event), sub: HELPER });
const isLive = ({ entry }: TreeEntry): boolean => entry.event.type === 'token.delta' && entry.event.live !== undefined;

/**
 * The lead's reply streams (live: a durable worker's deltas, in no journal; else each token an entry) while its helper
 * asks for an approval, is answered and ends; `wait` is the helper's wait's place.
 */
function timeline(live: boolean): { readonly entries: TreeEntry[]; readonly wait: number } {
  const token = (part: number): TreeEntry => (live ? lead(1, { type: 'token.delta', delta: WORDS[part] as string, live: { call: CALL, part } }) : lead(2 + part, { type: 'token.delta', delta: WORDS[part] as string }));
  const replyAt = live ? 2 : 2 + WORDS.length;
  const call = { id: 'c1', name: 'hold', arguments: '{"q":"x"}' };
  const entries: TreeEntry[] = [
    lead(0, { type: 'run.started', task: 'Talk.', model: 'm', tools: [] }),
    lead(1, { type: 'phase.entered', phase: 'reason' }),
    helper(0, { type: 'run.started', task: 'Ask.', model: 'm', tools: [] }),
    token(0),
    helper(1, { type: 'phase.entered', phase: 'reason' }),
    token(1),
    helper(2, { type: 'reasoning.completed', text: '', toolCalls: [call], usage }),
    token(2),
    helper(3, { type: 'human.awaiting', kind: 'confirmation', toolCallIds: ['c1'] }),
    token(3),
    token(4),
    helper(4, { type: 'human.decided', decision: 'approve', toolCallIds: ['c1'] }),
    token(5),
    helper(5, { type: 'observations.collected', count: 1, errors: 0, results: [{ toolCallId: 'c1', content: 'held x' }] }),
    ...WORDS.slice(6, 9).map((_, i) => token(6 + i)),
    helper(6, { type: 'phase.entered', phase: 'reason' }),
    helper(7, { type: 'reasoning.completed', text: 'Done.', toolCalls: [], usage }),
    helper(8, { type: 'run.terminated', reason: 'final_answer', iterations: 2, usage }),
    ...WORDS.slice(9).map((_, i) => token(9 + i)),
    lead(replyAt, { type: 'reasoning.completed', text: WORDS.join(''), toolCalls: [], usage, ...(live ? { call: CALL } : {}) }),
    lead(replyAt + 1, { type: 'run.terminated', reason: 'final_answer', iterations: 1, usage }),
  ];
  return { entries, wait: entries.findIndex(({ entry }) => entry.event.type === 'human.awaiting') };
}

/** What a follower that subscribes at `time` gets: the entries so far without live deltas, the lead's text so far again, then the rest. */
function followerAt(entries: readonly TreeEntry[], time: number): TreeEntry[] {
  const before = entries.slice(0, time);
  const streamed = before.filter((item) => isLive(item) && !before.some((other) => other.key === '' && other.entry.event.type === 'reasoning.completed'));
  const first = streamed[0];
  const catchUp: TreeEntry[] =
    first === undefined
      ? []
      : [{ ...first, entry: { ...first.entry, event: { type: 'token.delta', delta: streamed.map(({ entry }) => (entry.event as { delta: string }).delta).join(''), live: { call: CALL, part: streamed.length, catchUp: true } } } }];
  return [...before.filter((item) => !isLive(item)), ...catchUp, ...entries.slice(time)];
}

interface Frame {
  readonly id: string | undefined;
  readonly raw: string;
}

/** One response: from `after`, `fromStop` when it is the one a page's answer to a wait opens; `onEnd` hears where a wait ended it. */
async function framesOf<TEvent>(protocol: WebProtocol<TEvent>, entries: readonly TreeEntry[], after: TreeCursor | undefined, fromStop: boolean, onEnd?: (at: TreeCursor) => void): Promise<Frame[]> {
  const feed = defer(() => from(entries));
  const view = { runId: LEAD, threadId: LEAD, details: NO_DETAILS };
  const encoderOf = (sub: SubRun | undefined) => protocol.encoder({ ...view, runId: sub?.runId ?? LEAD });
  const waits = protocol.treeWaits?.bind(protocol);
  const stops = { ...(waits === undefined ? {} : { waits: () => waits(view, fromStop) }), ...(onEnd === undefined ? {} : { onEnd }) };
  const text = await new Response(treeSseBody(feed, encoderOf, protocol, after, new AbortController().signal, undefined, stops)).text();
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((raw) => ({ id: /^id: (.+)$/m.exec(raw)?.[1], raw: `${raw}\n\n` }));
}

const eventsOf = (frames: readonly Frame[]): BaseEvent[] => frames.map((frame) => JSON.parse(/^data: (.+)$/m.exec(frame.raw)?.[1] ?? '{}') as BaseEvent);
const startsOf = (frames: readonly Frame[]): string[] =>
  eventsOf(frames).flatMap((event) => {
    const { type, messageId, id, stepName, subagentRunId } = event as BaseEvent & { messageId?: string; id?: string; stepName?: string; subagentRunId?: string };
    return ['TEXT_MESSAGE_START', 'STEP_STARTED', 'SUBAGENT_STARTED', 'RUN_STARTED', 'text-start', 'reasoning-start'].includes(type) ? [`${type} ${messageId ?? id ?? stepName ?? subagentRunId ?? ''}`] : [];
  });
/** Text deltas of a message that follow each other as one, however the reader's pace joined them. */
const joined = (events: readonly BaseEvent[]): BaseEvent[] =>
  events.reduce<BaseEvent[]>((out, event) => {
    const last = out.at(-1) as (BaseEvent & { delta?: string; messageId?: string; id?: string }) | undefined;
    const next = event as BaseEvent & { delta?: string; messageId?: string; id?: string };
    const text = (e: typeof next) => ['TEXT_MESSAGE_CONTENT', 'text-delta'].includes(e.type);
    if (last !== undefined && text(last) && text(next) && (last.messageId ?? last.id) === (next.messageId ?? next.id)) out[out.length - 1] = { ...last, delta: `${last.delta}${next.delta}` } as BaseEvent;
    else out.push(event);
    return out;
  }, []);
const sorted = (items: readonly string[]): string[] => items.toSorted();

/**
 * What each run has in the page's messages after both responses, in its order (AG-UI's from all events, the AI SDK's
 * message carried from the first response into the second): a page that came back later has a streamed call's text
 * sooner, after the other run's parts of the meantime. The AI SDK's step starts name no run: counted.
 */
async function built(protocol: WebProtocol<unknown>, first: Frame[], second: Frame[]): Promise<Record<string, unknown[]>> {
  const owned: Record<string, unknown[]> = {};
  const add = (owner: string, item: unknown) => (owned[owner] ??= []).push(item);
  if (protocol === (agUiProtocol as WebProtocol<unknown>)) {
    for (const message of await agUiMessagesOf(eventsOf([...first, ...second]))) add((message as { subagentRunId?: string }).subagentRunId ?? LEAD, message);
    return owned;
  }
  const body = (frames: Frame[]) => new Response(frames.map((frame) => frame.raw).join(''));
  const message: UIMessage = await messageOf(body(second), await messageOf(body(first)));
  for (const part of message.parts) add(part.type === 'step-start' ? 'steps' : JSON.stringify(part).includes(HELPER.runId) ? HELPER.runId : LEAD, part);
  return owned;
}

describe("a tree's response that goes on after a sub-run's wait, read by a page that drops and reconnects", () => {
  // The AI SDK opens again only a part still streaming: a live reply the next response opens anew is none.
  for (const [live, name, protocol] of [
    [false, 'AG-UI', agUiProtocol],
    [false, 'AI SDK', aiSdkProtocol],
    [true, 'AG-UI', agUiProtocol],
  ] as const) {
      it(`${name}, the lead's reply ${live ? 'streamed live by a worker' : 'streamed into the journal'}: every event leaves a cursor after it, and the page builds the unbroken messages wherever it dropped`, { timeout: 60_000 }, async () => {
        const tree = protocol as WebProtocol<unknown>;
        const { entries, wait } = timeline(live);
        let stop: TreeCursor | undefined;
        const first = await framesOf(tree, entries.slice(0, wait + 1), undefined, false, (at) => (stop = at));
        expect(stop).toBeDefined();
        // The page's answer comes as the lead streams on.
        const answeredAt = wait + 2;
        const second = await framesOf(tree, followerAt(entries, answeredAt), stop, true);
        expect(second.every((frame) => frame.id !== undefined)).toBe(true);
        const unbroken = await built(tree, first, second);
        // What the lead had streamed before the wait is not sent again after it.
        const text = JSON.stringify(unbroken[LEAD]);
        expect(text.split(WORDS[0] as string).length - 1).toBe(1);
        expect(text).toContain(WORDS.slice(3).join(''));
        const unbrokenStarts = sorted(startsOf([...first, ...second]));
        await fc.assert(
          fc.asyncProperty(fc.integer({ min: answeredAt, max: entries.length }), fc.nat(), fc.nat({ max: entries.length }), async (time, cut, later) => {
            // The page's second response, read until `time`, of which it kept the first `cut` events; it comes back at `back`.
            const got = time === entries.length ? second : await framesOf(tree, followerAt(entries.slice(0, time), answeredAt), stop, true);
            const had = got.slice(0, cut % (got.length + 1));
            const back = Math.min(entries.length, time + later);
            const after = parseTreeEventId([...first, ...had].findLast((frame) => frame.id !== undefined)?.id ?? null);
            const rest = await framesOf(tree, followerAt(entries, back), after, false);
            expect(await built(tree, first, [...had, ...rest])).toEqual(unbroken);
            expect(sorted(startsOf([...first, ...had, ...rest]))).toEqual(unbrokenStarts);
            // Read from the journal alone, a reconnect gives exactly the events the page lacks.
            if (!live) expect(joined(eventsOf([...had, ...rest]))).toEqual(joined(eventsOf(second)));
          }),
          { numRuns: 150 },
        );
      });
  }
});

describe("the response a page's answer to a sub-run's wait opens, while the lead's reply streams live", () => {
  for (const [name, protocol] of [
    ['AG-UI', agUiProtocol],
    ['AI SDK', aiSdkProtocol],
  ] as const) {
    it(`${name}: goes on with the text the page lacks, in the message the wait ended, opened again`, async () => {
      const tree = protocol as WebProtocol<unknown>;
      const { entries, wait } = timeline(true);
      let stop: TreeCursor | undefined;
      const first = await framesOf(tree, entries.slice(0, wait + 1), undefined, false, (at) => (stop = at));
      const second = await framesOf(tree, followerAt(entries, wait + 2), stop, true);
      const lead = JSON.stringify((await built(tree, first, second))[LEAD]);
      expect(lead.split(WORDS[0] as string).length - 1).toBe(1);
      expect(lead.replaceAll(/"(?:state|type|id|role|providerMetadata)":[^,}]*,?/g, '')).toContain(protocol === agUiProtocol ? WORDS.join('') : WORDS.slice(3).join(''));
    });
  }
});

describe("a page that drops while the lead's reply streams live and comes back before a sub-run's wait ends the response", () => {
  const closes = (frames: readonly Frame[]): string[] =>
    eventsOf(frames).flatMap((event) => {
      const { type, messageId, id } = event as BaseEvent & { messageId?: string; id?: string };
      return ['TEXT_MESSAGE_END', 'text-end', 'reasoning-end'].includes(type) ? [`${type} ${messageId ?? id ?? ''}`] : [];
    });
  /** What each run has in the page's messages after the response. */
  async function builtOne(protocol: WebProtocol<unknown>, frames: Frame[]): Promise<Record<string, unknown[]>> {
    const owned: Record<string, unknown[]> = {};
    const add = (owner: string, item: unknown) => (owned[owner] ??= []).push(item);
    if (protocol === (agUiProtocol as WebProtocol<unknown>)) for (const message of await agUiMessagesOf(eventsOf(frames))) add((message as { subagentRunId?: string }).subagentRunId ?? LEAD, message);
    else for (const part of (await messageOf(new Response(frames.map((frame) => frame.raw).join('')))).parts) add(part.type === 'step-start' ? 'steps' : JSON.stringify(part).includes(HELPER.runId) ? HELPER.runId : LEAD, part);
    return owned;
  }

  for (const [name, protocol] of [
    ['AG-UI', agUiProtocol],
    ['AI SDK', aiSdkProtocol],
  ] as const) {
    it(`${name}: the resumed stream ends the lead's message at the wait, as the unbroken one does`, { timeout: 60_000 }, async () => {
      const tree = protocol as WebProtocol<unknown>;
      const { entries, wait } = timeline(true);
      const upToWait = entries.slice(0, wait + 1);
      const unbroken = await framesOf(tree, upToWait, undefined, false);
      expect(closes(unbroken).some((close) => close.includes(CALL))).toBe(true);
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: wait }), fc.nat(), fc.nat({ max: wait }), async (time, cut, later) => {
          const got = await framesOf(tree, entries.slice(0, time), undefined, false);
          const had = got.slice(0, cut % (got.length + 1));
          const back = Math.min(wait, time + later);
          const after = parseTreeEventId(had.findLast((frame) => frame.id !== undefined)?.id ?? null);
          const rest = await framesOf(tree, followerAt(upToWait, back), after, false);
          expect(await builtOne(tree, [...had, ...rest])).toEqual(await builtOne(tree, unbroken));
          expect(sorted(closes([...had, ...rest]))).toEqual(sorted(closes(unbroken)));
          expect(sorted(startsOf([...had, ...rest]))).toEqual(sorted(startsOf(unbroken)));
        }),
        { numRuns: 100 },
      );
    });
  }
});
