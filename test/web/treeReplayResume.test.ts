/**
 * A real multi-agent run over HTTP on 127.0.0.1: a lead (scripted model) streams text and delegates to a researcher
 * that streams text and waits for an approval of its `add` (alone, or beside a helper that holds in its `hold`).
 * Replayed from the journals, the tree comes in journal order (the lead up to a delegation, that sub-run's journal so
 * far, the lead's rest), not in the order it ran. A page that drops anywhere in the replay, once or several times, and
 * reconnects with the id of the last event it kept builds with the stock clients what an unbroken page builds, per
 * agent, with no event twice and no part started twice; so does a page that read the run live, dropped and came
 * back once the run ended, or while a sub-agent still ran beside one whose wait ended the page's response.
 */
import type { BaseEvent } from '@ag-ui/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { UIMessage } from 'ai';
import type { AgentRun } from '../../src/agent/types.ts';
import { createAgUiHandler } from '../../src/web/agUi.ts';
import { createAiSdkHandler } from '../../src/web/aiSdk.ts';
import { trackedSystem } from '../system/helpers.ts';
import type { AgentSystem } from '../../src/system/types.ts';
import { delegation, parallelDelegation } from './fixtures/delegation.ts';
import { add, agUiMessagesOf, chatBody, messageOf, post, runInput, servedPerTest } from './support.ts';

const served = servedPerTest();

interface Frame {
  readonly id: string | undefined;
  readonly raw: string;
  readonly data: BaseEvent & Record<string, unknown>;
}

const framesOf = (text: string): Frame[] =>
  text
    .split('\n\n')
    .filter((block) => block.trim() !== '' && /^data: /m.test(block))
    .map((raw) => ({ id: /^id: (.+)$/m.exec(raw)?.[1], raw: `${raw}\n\n`, data: JSON.parse(/^data: (.+)$/m.exec(raw)?.[1] ?? '{}') as Frame['data'] }))
    .filter((frame) => (frame.data.type as unknown) !== undefined);

async function read(response: Response): Promise<Frame[]> {
  if (response.status !== 200) throw new Error(`the response is ${response.status}: ${await response.text()}`);
  return framesOf(await response.text());
}

type Protocol = 'AG-UI' | 'AI SDK';

const startsOf = (frames: readonly Frame[]): string[] =>
  frames.flatMap(({ data }) => {
    const { type, messageId, id, stepName, subagentRunId, toolCallId } = data as BaseEvent & { messageId?: string; id?: string; stepName?: string; subagentRunId?: string; toolCallId?: string };
    return ['TEXT_MESSAGE_START', 'STEP_STARTED', 'SUBAGENT_STARTED', 'RUN_STARTED', 'TOOL_CALL_START', 'text-start', 'reasoning-start', 'tool-input-start'].includes(type)
      ? [`${type} ${messageId ?? toolCallId ?? id ?? stepName ?? subagentRunId ?? ''} ${subagentRunId ?? ''}`]
      : [];
  });

/** The starts of parts the page had open already, and the tool calls it was sent twice: none, for a page the stock clients serve. */
function startedTwice(frames: readonly Frame[]): string[] {
  const open = new Set<string>();
  const calls = new Set<string>();
  const twice: string[] = [];
  for (const { data } of frames) {
    const { type, messageId, id, toolCallId, stepName, subagentRunId } = data as BaseEvent & { messageId?: string; id?: string; toolCallId?: string; stepName?: string; subagentRunId?: string };
    const part = ['TEXT_MESSAGE_START', 'TEXT_MESSAGE_END'].includes(type) ? `text ${messageId}` : ['STEP_STARTED', 'STEP_FINISHED'].includes(type) ? `step ${stepName} ${subagentRunId}` : `part ${id}`;
    if (['TEXT_MESSAGE_START', 'STEP_STARTED', 'text-start', 'reasoning-start'].includes(type)) {
      if (open.has(part)) twice.push(`${type} ${part}`);
      open.add(part);
    } else if (['TEXT_MESSAGE_END', 'STEP_FINISHED', 'text-end', 'reasoning-end'].includes(type)) open.delete(part);
    if (['TOOL_CALL_START', 'tool-input-start'].includes(type)) {
      if (calls.has(toolCallId as string)) twice.push(`${type} ${toolCallId}`);
      calls.add(toolCallId as string);
    }
  }
  return twice;
}

/** Text deltas of a message that follow each other as one, however the server's pace joined them. */
const joined = (frames: readonly Frame[]): unknown[] =>
  frames.reduce<(BaseEvent & { delta?: string; messageId?: string; id?: string })[]>((out, { data }) => {
    const last = out.at(-1);
    const next = data as BaseEvent & { delta?: string; messageId?: string; id?: string };
    const text = (e: typeof next) => ['TEXT_MESSAGE_CONTENT', 'text-delta'].includes(e.type);
    if (last !== undefined && text(last) && text(next) && (last.messageId ?? last.id) === (next.messageId ?? next.id)) out[out.length - 1] = { ...last, delta: `${last.delta}${next.delta}` };
    else out.push(next);
    return out;
  }, []);

/** What each agent has in the page's messages: AG-UI's from all its events, the AI SDK's message carried from response to response. */
async function built(protocol: Protocol, reading: readonly Frame[], subs: readonly string[]): Promise<Record<string, unknown[]>> {
  const owned: Record<string, unknown[]> = {};
  const put = (owner: string, item: unknown) => (owned[owner] ??= []).push(item);
  if (protocol === 'AG-UI') {
    for (const message of await agUiMessagesOf(reading.map((frame) => frame.data))) put((message as { subagentRunId?: string }).subagentRunId ?? 'lead', message);
    return owned;
  }
  // The reader of each response the page read to its finish goes on with the message the one before built.
  const responses: Frame[][] = [[]];
  for (const frame of reading) {
    (responses.at(-1) as Frame[]).push(frame);
    if ((frame.data.type as string) === 'finish') responses.push([]);
  }
  let message: UIMessage | undefined;
  for (const response of responses.filter((frames) => frames.length > 0)) message = await messageOf(new Response(response.map((frame) => frame.raw).join('')), message);
  for (const part of message?.parts ?? []) put(part.type === 'step-start' ? 'steps' : (subs.find((sub) => JSON.stringify(part).includes(sub)) ?? 'lead'), part);
  return owned;
}

/** Two sub-agents at once (see `parallelDelegation`): the helper ends only after the wait ended the page's first response. */
function parallel(system: AgentSystem): () => void {
  return parallelDelegation(system, add(true)).release;
}

type Tree = 'one sub-agent' | 'two sub-agents at once';

/** The lead's run started by a page over HTTP in a system of its own; `first` is what the page's first response had. */
async function started(protocol: Protocol, tree: Tree) {
  const { system } = trackedSystem();
  const release = tree === 'one sub-agent' ? (delegation(system, [add(true)], 'add'), () => undefined) : parallel(system);
  let run: AgentRun | undefined;
  const onRun = (handle: AgentRun) => void (run = handle);
  const lead = system.get('lead').agent;
  const handler = protocol === 'AG-UI' ? createAgUiHandler(lead, { system, onRun }) : createAiSdkHandler(lead, { system, onRun });
  const { url } = await served(handler);
  const body = protocol === 'AG-UI' ? runInput('What is 20 + 22?', 'run-lead') : chatBody([{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'What is 20 + 22?' }] }]);
  const first = await read(await post(url, body));
  const runId = (run as AgentRun).runId;
  const delegated = (to: string) => (lead.journal.entries(runId).find(({ event }) => event.type === 'agent.message' && event.kind === 'delegate' && event.to === to)?.event as { runId: string }).runId;
  return { system, release, url, first, runId, delegated, sub: delegated('researcher') };
}

/** A run in a system of its own, answered and ended: the page that started it read both its responses to their ends. */
async function endedRun(protocol: Protocol, tree: Tree) {
  const { system, release, url, first, runId, delegated, sub } = await started(protocol, tree);
  const subs = tree === 'one sub-agent' ? [sub] : [sub, delegated('helper')];
  expect(system.get('researcher').agent.handle(sub)?.phase()).toBe('awaitingHuman');
  if (tree !== 'one sub-agent') {
    const helper = delegated('helper');
    // The wait ended the first response while the helper's part was open.
    expect(JSON.stringify(first.map((frame) => frame.data))).toContain(helper);
    release();
    await expect.poll(() => system.get('helper').agent.journal.entries(helper).some((entry) => entry.event.type === 'run.terminated')).toBe(true);
  }
  expect((await post(`${url}/runs/${sub}/approve`, {})).status).toBe(202);
  const second = await read(await fetch(`${url}/runs/${runId}/stream`, { headers: { 'last-event-id': first.at(-1)?.id as string } }));
  await expect.poll(() => system.get('lead').agent.journal.entries(runId).some((entry) => entry.event.type === 'run.terminated')).toBe(true);
  const stream = (after: string | undefined) => fetch(`${url}/runs/${runId}/stream`, after === undefined ? {} : { headers: { 'last-event-id': after } });
  return { live: [...first, ...second], sub, subs, stream };
}

/**
 * A page that reads the ended run from its start (or from the end of what it `had`), connection after connection (a response that ends at a wait, the next
 * one from its last event), until one gives it nothing more; its `n`-th connection keeps only the first `cuts[n]` events
 * it got (none cut past `cuts`).
 */
async function page(stream: (after: string | undefined) => Promise<Response>, cuts: readonly number[], had: readonly Frame[] = []): Promise<Frame[]> {
  const reading: Frame[] = [...had];
  for (let connection = 0; ; connection++) {
    if (connection > 20) throw new Error(`the page made ${connection} connections and has ${reading.length} events`);
    const got = await read(await stream(reading.findLast((frame) => frame.id !== undefined)?.id));
    const cut = cuts[connection];
    if (cut === undefined && got.length === 0) return reading;
    reading.push(...(cut === undefined ? got : got.slice(0, cut)));
  }
}

/** Each protocol with each tree. */
const CASES = (['AG-UI', 'AI SDK'] as const).flatMap((protocol) => (['one sub-agent', 'two sub-agents at once'] as const).map((tree) => [protocol, tree] as const));

describe('an ended multi-agent run, replayed from its journals to a page that drops and reconnects', () => {
  for (const [protocol, tree] of CASES) {
    it(`${protocol}, ${tree}: the page builds the unbroken messages of each agent wherever it dropped, no event twice, no part started twice`, { timeout: 120_000 }, async () => {
      const { live, sub, subs, stream } = await endedRun(protocol, tree);
      expect(startedTwice(live)).toEqual([]);
      const unbroken = await page(stream, []);
      // The replay builds what the live page built; with one sub-agent, from the same events (deltas as the server's pace
      // joined them). Two at once interleaved live, and come one after the other from the journals.
      if (tree === 'one sub-agent') expect(joined(unbroken)).toEqual(joined(live));
      const messages = await built(protocol, unbroken, subs);
      expect(messages).toEqual(await built(protocol, live, subs));
      expect(Object.keys(messages)).toEqual(expect.arrayContaining(['lead', sub]));
      expect(JSON.stringify(messages[sub])).toContain('It is 42.');
      const starts = startsOf(unbroken).toSorted();
      const events = joined(unbroken);

      const check = async (cuts: readonly number[]): Promise<void> => {
        const reading = await page(stream, cuts);
        expect(joined(reading)).toEqual(events);
        expect(startsOf(reading).toSorted()).toEqual(starts);
        expect(startedTwice(reading)).toEqual([]);
        expect(await built(protocol, reading, subs)).toEqual(messages);
      };
      // One drop after every event.
      for (let cut = 0; cut < unbroken.length; cut++) await check([cut]);
      // Several drops anywhere.
      await fc.assert(
        fc.asyncProperty(fc.array(fc.nat({ max: unbroken.length }), { minLength: 1, maxLength: 5 }), (cuts) => check(cuts)),
        { numRuns: 40 },
      );
    });

  }
});

describe('a multi-agent run read live by a page that drops, which comes back once the run has ended (replayed from its journals)', () => {
  for (const [protocol, tree] of CASES) {
    it(`${protocol}, ${tree}: a page that read the live run, dropped anywhere and came back once it had ended builds the live messages of each agent`, { timeout: 120_000 }, async () => {
      const { live, subs, stream } = await endedRun(protocol, tree);
      const messages = await built(protocol, live, subs);
      const check = async (cut: number, cuts: readonly number[]): Promise<void> => {
        const reading = await page(stream, cuts, live.slice(0, cut));
        expect(startedTwice(reading)).toEqual([]);
        expect(await built(protocol, reading, subs)).toEqual(messages);
      };
      for (let cut = 0; cut <= live.length; cut++) await check(cut, []);
      await fc.assert(
        fc.asyncProperty(fc.nat({ max: live.length }), fc.array(fc.nat({ max: live.length }), { maxLength: 3 }), (cut, cuts) => check(cut, cuts)),
        { numRuns: 40 },
      );
    });
  }
});
/**
 * Two sub-agents at once: the page reads the first response live and keeps its first `cut` events; the researcher's wait
 * is answered and it ends, and the page reconnects while the helper still holds, beside a page that reads on unbroken.
 */
async function stillRunning(protocol: Protocol, cut: number) {
  const { system, release, url, first, runId, delegated, sub } = await started(protocol, 'two sub-agents at once');
  expect((await post(`${url}/runs/${sub}/approve`, {})).status).toBe(202);
  await expect.poll(() => system.get('researcher').agent.journal.entries(sub).some((entry) => entry.event.type === 'run.terminated')).toBe(true);
  const stream = (after: string | undefined) => fetch(`${url}/runs/${runId}/stream`, after === undefined ? {} : { headers: { 'last-event-id': after } });
  const had = first.slice(0, Math.min(cut, first.length));
  const unbroken = stream(first.at(-1)?.id).then(read);
  const back = await stream(had.findLast((frame) => frame.id !== undefined)?.id);
  release();
  const rest = await read(back);
  // Once the run has ended, a page that reads on is served from the journals.
  const reading = await page(stream, [], [...had, ...rest]);
  return { live: [...first, ...(await unbroken)], reading, subs: [sub, delegated('helper')] };
}

/**
 * Live, the helper's events came between the researcher's, and the researcher's wait closed the helper's open parts
 * too. A reconnect reads the journals so far put back in the order they were written, so it reaches the wait with
 * the same parts open, numbers what the wait closed as the live reading did and misses nothing the page lacked.
 */
describe('a multi-agent run still running, to which a page that read it live and dropped reconnects', () => {
  for (const protocol of ['AG-UI', 'AI SDK'] as const) {
    it(`${protocol}, two sub-agents at once: the page builds the live messages of each agent wherever it dropped`, { timeout: 120_000 }, async () => {
      // One drop after every event of the first response, each in a run of its own; every failing drop is told at once.
      const failed: string[] = [];
      for (let cut = 0; cut <= 70; cut++) {
        const { live, reading, subs } = await stillRunning(protocol, cut);
        const twice = startedTwice(reading);
        let same = 'same';
        try {
          expect(await built(protocol, reading, subs)).toEqual(await built(protocol, live, subs));
        } catch (error) {
          same = String(error).slice(0, 200);
        }
        if (twice.length > 0 || same !== 'same') failed.push(`cut ${cut} after ${live[cut - 1]?.id} ${live[cut - 1]?.data.type}: ${twice.join(';')} ${same}`);
      }
      expect(failed).toEqual([]);
    });
  }
});
