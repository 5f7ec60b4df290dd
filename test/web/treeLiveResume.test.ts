/**
 * A run tree whose runs stream live (durable sub-agents: deltas in no journal) gives its live events ids too: every
 * run's position, and how much of the live message each run has open the page has (`1@4.0.t457`). A page that
 * drops after any event and reconnects with the last id it had builds, with the stock clients, what an unbroken
 * stream builds.
 */
import type { BaseEvent } from '@ag-ui/core';
import fc from 'fast-check';
import { defer, from } from 'rxjs';
import { describe, expect, it } from 'vitest';
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
const usage = { promptTokens: 1, completionTokens: 2, totalTokens: 3 };
const words = (text: string) => text.split(/(?<= )/);

type Stream = { readonly thinking: readonly string[]; readonly text: readonly string[] };
const callOf = (runId: string) => `${runId}:model:0:0`;
const entryOf = (runId: string, sequence: number, event: LoopEvent): JournalEntry => ({ sequence, timestamp: 0, agentId: runId === LEAD ? 'lead' : 'helper', runId, iteration: 0, event });
const isLive = ({ entry }: TreeEntry): boolean => (entry.event.type === 'token.delta' || entry.event.type === 'thinking.delta') && entry.event.live !== undefined;
const liveOf = (item: TreeEntry) => (item.entry.event as { live: { call: string; part: number } }).live;

/** One run's entries: started, a step, its call's live deltas, the reply, its end. */
function runOf(runId: string, call: Stream): JournalEntry[] {
  const at = (sequence: number, event: LoopEvent) => entryOf(runId, sequence, event);
  const live = (part: number, type: 'token.delta' | 'thinking.delta', delta: string) => at(1, { type, delta, live: { call: callOf(runId), part } });
  const reasoning = call.thinking.join('');
  return [
    at(0, { type: 'run.started', task: 'Count.', model: 'm', tools: [] }),
    at(1, { type: 'phase.entered', phase: 'reason' }),
    ...call.thinking.map((delta, part) => live(part, 'thinking.delta', delta)),
    ...call.text.map((delta, part) => live(call.thinking.length + part, 'token.delta', delta)),
    at(2, { type: 'reasoning.completed', text: call.text.join(''), toolCalls: [], usage, call: callOf(runId), ...(reasoning === '' ? {} : { reasoning }) }),
    at(3, { type: 'run.terminated', reason: 'final_answer', iterations: 1, usage }),
  ];
}

/** The lead and its helper streaming at once, their entries interleaved; the lead ends last. */
function treeTimeline(): TreeEntry[] {
  const lead = runOf(LEAD, { thinking: [], text: words('The helper counts while I say this.') });
  const helper = runOf(HELPER.runId, { thinking: words('Counting to five. '), text: words('one two three four five.') });
  const out: TreeEntry[] = [];
  for (let i = 0; i < Math.max(lead.length, helper.length); i++) {
    const theirs = helper[i];
    const own = lead[i];
    if (own !== undefined && i < lead.length - 1) out.push({ key: '', entry: own });
    if (theirs !== undefined) out.push({ key: '1', entry: theirs, sub: HELPER });
  }
  return [...out, { key: '', entry: lead.at(-1) as JournalEntry }];
}

/**
 * What a follower that subscribes at `time` gets: the entries so far without live deltas; for each run's call then
 * streaming, its text so far again (`catchUp`) and its next deltas, or else none of them (its reply brings the text); then the rest.
 */
function followerAt(entries: readonly TreeEntry[], time: number, catchUp: boolean): TreeEntry[] {
  const before = entries.slice(0, time);
  const out = before.filter((item) => !isLive(item));
  let rest = entries.slice(time);
  for (const key of new Set(before.map((item) => item.key))) {
    const own = before.filter((item) => item.key === key);
    const streaming = own.slice(own.findLastIndex((item) => !isLive(item)) + 1);
    const first = streaming[0];
    if (first === undefined) continue;
    const { call } = liveOf(first);
    if (!catchUp) {
      rest = rest.filter((item) => !isLive(item) || liveOf(item).call !== call);
      continue;
    }
    const so = (type: string) => streaming.flatMap(({ entry }) => (entry.event.type === type ? [(entry.event as { delta: string }).delta] : [])).join('');
    for (const type of ['thinking.delta', 'token.delta'] as const) {
      if (so(type) === '') continue;
      const event = { type, delta: so(type), live: { call, part: streaming.length, catchUp: true as const } };
      out.push({ ...first, entry: { ...first.entry, event } });
    }
  }
  return [...out, ...rest];
}

interface Frame {
  readonly id: string | undefined;
  readonly raw: string;
}

async function framesOf<TEvent>(protocol: WebProtocol<TEvent>, entries: readonly TreeEntry[], after: TreeCursor | undefined, maxAhead?: number, again = entries): Promise<Frame[]> {
  let subscriptions = 0;
  const feed = defer(() => from(subscriptions++ === 0 ? entries : again));
  const encoderOf = (sub: SubRun | undefined) => protocol.encoder({ runId: sub?.runId ?? LEAD, threadId: LEAD, details: NO_DETAILS });
  const waits = protocol.treeWaits?.bind(protocol);
  const stops = waits === undefined ? {} : { waits: () => waits({ runId: LEAD, threadId: LEAD, details: NO_DETAILS }, false) };
  const text = await new Response(treeSseBody(feed, encoderOf, protocol, after, new AbortController().signal, maxAhead, stops)).text();
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((raw) => ({ id: /^id: (.+)$/m.exec(raw)?.[1], raw: `${raw}\n\n` }));
}

/**
 * What each run has in the page's message(s), in its order: runs interleave in arrival order, which differs for a
 * page that joined late (its call's text then comes with its reply, after the other run's parts of the meantime).
 * The AI SDK's step starts name no run: counted.
 */
function byRun(built: unknown): Record<string, unknown[]> {
  const owned: Record<string, unknown[]> = {};
  const add = (owner: string, item: unknown) => (owned[owner] ??= []).push(item);
  if (Array.isArray(built)) for (const message of built as { subagentRunId?: string }[]) add(message.subagentRunId ?? LEAD, message);
  else
    for (const part of (built as { parts: { type: string }[] }).parts) {
      if (part.type === 'step-start') add('steps', part.type);
      else add(JSON.stringify(part).includes(HELPER.runId) ? HELPER.runId : LEAD, part);
    }
  return owned;
}

const eventsOf = (frames: readonly Frame[]): BaseEvent[] => frames.map((frame) => JSON.parse(/^data: (.+)$/m.exec(frame.raw)?.[1] ?? '{}') as BaseEvent);

describe('a run tree that streams live, read by a page that drops and reconnects with the id of the last event it had', () => {
  const entries = treeTimeline();

  it('gives live events ids: every run’s position, with the helper’s live mark', async () => {
    const frames = await framesOf(aiSdkProtocol, entries.slice(0, 12), undefined);
    const ids = frames.flatMap((frame) => (frame.id === undefined ? [] : [frame.id]));
    expect(ids.some((id) => /,1@1\.\d+\.r\d+/.test(id))).toBe(true);
    expect(ids.some((id) => /^1\.\d+\.t\d+/.test(id))).toBe(true);
    // Nothing goes without an id but what ends a failed stream.
    expect(frames.every((frame) => frame.id !== undefined)).toBe(true);
    expect(parseTreeEventId('1.1.t4,1@1.1.r25e')).toEqual(
      new Map([
        ['', { sequence: 1, index: 1, mark: { text: 4 } }],
        ['1', { sequence: 1, index: 1, mark: { reasoning: 25, ended: true } }],
      ]),
    );
  });

  const drops = fc.record({
    time: fc.integer({ min: 1, max: entries.length }),
    later: fc.integer({ min: 0, max: entries.length }),
    cut: fc.nat(),
    catchUp: fc.boolean(),
    // A reader this many entries behind has the tree followed again from its start.
    ahead: fc.constantFrom(undefined, 3),
  });

  for (const [name, protocol, build] of [
    ['AG-UI (@ag-ui/client)', agUiProtocol, async (frames: Frame[]) => agUiMessagesOf(eventsOf(frames))],
    ['AI SDK (readUIMessageStream)', aiSdkProtocol, (frames: Frame[]) => messageOf(new Response(frames.map((frame) => frame.raw).join('')))],
  ] as const) {
    it(`${name}: builds the unbroken stream's messages wherever it dropped and whenever it came back, no part started twice`, { timeout: 60_000 }, async () => {
      const run = build as (frames: Frame[]) => Promise<unknown>;
      const unbroken = byRun(await run(await framesOf(protocol as WebProtocol<unknown>, entries, undefined)));
      await fc.assert(
        fc.asyncProperty(drops, async ({ time, later, cut, catchUp, ahead }) => {
          const got = await framesOf(protocol as WebProtocol<unknown>, entries.slice(0, time), undefined, ahead, followerAt(entries.slice(0, time), time, catchUp));
          const had = got.slice(0, cut % (got.length + 1));
          const back = Math.min(entries.length, time + later);
          const after = parseTreeEventId(had.findLast((frame) => frame.id !== undefined)?.id ?? null);
          const rest = await framesOf(protocol as WebProtocol<unknown>, followerAt(entries, back, catchUp), after, ahead, followerAt(entries, entries.length, catchUp));
          expect(byRun(await run([...had, ...rest]))).toEqual(unbroken);
          const starts = eventsOf([...had, ...rest]).flatMap((event) => {
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
