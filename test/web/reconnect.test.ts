/**
 * A page that loses its stream and reconnects with `Last-Event-ID` gets exactly the events it
 * missed, then the live tail: from this process's journal, or from the store when another
 * process serves the reconnect.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { createAgUiHandler } from '../../src/web/agUi.ts';
import type { WebHandlerOptions } from '../../src/web/handler.ts';
import type { AgentConfig } from '../../src/agent/config.ts';
import { stopTrackedAgents, trackAgent } from '../support/agents.ts';
import { splitWords } from '../../src/testing/streamEvents.ts';
import { EventReader, pacedModel, post, runInput, serve, type Served, type SseEvent } from './support.ts';

const FIRST = 'First I will look that up, carefully and slowly.';
const SECOND = 'The answer, after holding on for a while, is forty two.';

const servers: Served[] = [];
const dirs: string[] = [];
afterEach(async () => {
  stopTrackedAgents();
  await Promise.all(servers.splice(0).map((s) => s.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * An agent whose run streams a reply, then holds in its tool call until `release()`. With
 * `paced`, its text deltas come only as `tokens(n)` lets them.
 */
function holdingAgent(extra: Partial<AgentConfig> = {}, paced = false) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const hold = defineTool({ name: 'hold', description: 'Holds', input: z.object({ q: z.string() }), execute: async ({ q }) => (await released, `held ${q}`) });
  const scripted = scriptedModel([{ text: FIRST, toolCalls: [{ name: 'hold', arguments: { q: 'x' } }] }, { text: SECOND }]);
  const model = pacedModel(scripted);
  if (!paced) model.release(Number.MAX_SAFE_INTEGER);
  const agent = trackAgent({ model: { provider: model.provider, stream: true }, tools: [hold], ...extra });
  return { agent, release, tokens: model.release };
}

async function served(agent: ReturnType<typeof holdingAgent>['agent'], options: WebHandlerOptions = {}): Promise<Served> {
  const server = await serve(createAgUiHandler(agent, options));
  servers.push(server);
  return server;
}

const stream = (url: string, runId: string, after: string | undefined) =>
  fetch(`${url}/runs/${runId}/stream`, after === undefined ? {} : { headers: { 'last-event-id': after } });

/**
 * An event without its thread id: the page's conversation id, which only the process its run
 * was started in was told (another echoes the run id).
 */
function threadless({ id, data }: SseEvent): SseEvent {
  const { threadId: _threadId, ...rest } = data;
  return { id, data: rest };
}

/** The texts of the assistant messages, reassembled from their content events. */
function texts(events: readonly SseEvent[]): string[] {
  const byMessage = new Map<string, string>();
  for (const { data } of events) {
    if (data.type === 'TEXT_MESSAGE_START') byMessage.set(data.messageId as string, '');
    if (data.type === 'TEXT_MESSAGE_CONTENT') byMessage.set(data.messageId as string, `${byMessage.get(data.messageId as string)}${data.delta as string}`);
  }
  return [...byMessage.values()];
}

describe('reconnecting with Last-Event-ID', () => {
  it('gives the events after the last one received and then the live tail, wherever the connection dropped and however text was joined', { timeout: 60_000 }, async () => {
    const words = [...splitWords(FIRST), ...splitWords(SECOND)];
    const firstWords = splitWords(FIRST).length;
    let n = 0;
    await fc.assert(
      // Each step lets some deltas through, reads until they arrived (joined, as they waited), then maybe drops the connection.
      fc.asyncProperty(fc.array(fc.record({ deltas: fc.integer({ min: 0, max: 6 }), drop: fc.boolean() }), { minLength: 1, maxLength: 8 }), async (steps) => {
        const runId = `run-drop-${n++}`;
        const { agent, release, tokens } = holdingAgent({}, true);
        const { url } = await served(agent);

        const received: SseEvent[] = [];
        let reader = new EventReader(await post(url, runInput('Look it up', runId)));
        let letThrough = 0;
        for (const step of steps) {
          tokens(step.deltas);
          letThrough = Math.min(words.length, letThrough + step.deltas);
          // The run holds in its tool once its first reply is through: the rest happens while it may have no reader.
          if (letThrough >= firstWords) release();
          const expected = words.slice(0, letThrough).join('');
          await reader.whilst(() => texts([...received, ...reader.events]).join('') !== expected);
          if (!step.drop) continue;
          received.push(...reader.events);
          await reader.drop();
          reader = new EventReader(await stream(url, runId, received.at(-1)?.id));
        }
        tokens(words.length);
        release();
        received.push(...(await reader.rest()));

        const ids = received.map((e) => e.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect(texts(received)).toEqual([FIRST, SECOND]);
        // A joined event's id is its last delta's entry: the text up to it is the journal's up to that entry.
        const journal = agent.journal.entries(runId);
        let sent = '';
        for (const { id, data } of received) {
          if (data.type === 'TEXT_MESSAGE_START') sent = '';
          if (data.type !== 'TEXT_MESSAGE_CONTENT') continue;
          sent += data.delta as string;
          const upTo = Number((id ?? '').split('.')[0]);
          const start = Number((data.messageId as string).split(':').at(-1));
          const streamed = journal.filter((e) => e.sequence >= start && e.sequence <= upTo && e.event.type === 'token.delta');
          expect(streamed.map((e) => (e.event.type === 'token.delta' ? e.event.delta : '')).join('')).toBe(sent);
        }
        const unbroken = await new EventReader(await stream(url, runId, undefined)).rest();
        const notText = (events: SseEvent[]) => events.filter((e) => e.data.type !== 'TEXT_MESSAGE_CONTENT');
        expect(notText(received)).toEqual(notText(unbroken));
        // Deltas let through together came as one event.
        const contents = received.filter((e) => e.data.type === 'TEXT_MESSAGE_CONTENT').length;
        if (steps.some((step) => step.deltas > 1)) expect(contents).toBeLessThan(words.length);
        expect(received.find((e) => e.data.type === 'TOOL_CALL_ARGS')?.data.delta).toBe('{"q":"x"}');
        expect(received.find((e) => e.data.type === 'TOOL_CALL_RESULT')?.data.content).toBe('held x');
        expect(received.at(-1)?.data.type).toBe('RUN_FINISHED');
        agent.stop();
      }),
      { numRuns: 12 },
    );
  });

  it('numbers every event by its journal entry, so the replay of a finished run is the live stream, event for event', async () => {
    const { agent, release } = holdingAgent();
    const { url } = await served(agent);
    release();
    const live = await new EventReader(await post(url, runInput('Look it up', 'run-live'))).rest();
    const replay = await new EventReader(await stream(url, 'run-live', undefined)).rest();
    expect(replay).toEqual(live);
    const sequences = live.map((e) => (e.id ?? '').split('.').map(Number) as [number, number]);
    // Ids rise: by entry sequence, then by place within the entry.
    for (let i = 1; i < sequences.length; i++) {
      const [a, b] = [sequences[i - 1] as [number, number], sequences[i] as [number, number]];
      expect(a[0] < b[0] || (a[0] === b[0] && a[1] < b[1])).toBe(true);
    }
    const tail = await new EventReader(await stream(url, 'run-live', live.at(-3)?.id)).rest();
    expect(tail).toEqual(live.slice(-2));
  });

  it('is served from the store by another process: text, steps, tool arguments and results and the end as the first process sent them', { timeout: 30_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'actorloop-web-'));
    dirs.push(dir);
    const { agent, release } = holdingAgent({ persistence: { store: createFileStore({ dir }) } });
    const first = await served(agent);
    const reader = new EventReader(await post(first.url, runInput('Look it up', 'run-elsewhere')));
    const received = await reader.take(5);
    await reader.drop();

    // Another process: its own agent (an empty journal), the same store.
    const elsewhere = holdingAgent({ persistence: { store: createFileStore({ dir }) } });
    const second = await served(elsewhere.agent, { store: createFileStore({ dir }), pollIntervalMs: 100 });
    const resumed = new EventReader(await stream(second.url, 'run-elsewhere', received.at(-1)?.id));
    // What the store holds is served at once; the run's end arrives by reading the store again.
    await resumed.until((e) => e.data.type === 'TOOL_CALL_START');
    release();
    received.push(...(await resumed.rest()));

    const unbroken = await new EventReader(await stream(first.url, 'run-elsewhere', undefined)).rest();
    // Event for event what the process that ran it sends, the call's arguments and result included.
    expect(received.map(threadless)).toEqual(unbroken.map(threadless));
    expect(received.filter((e) => e.data.type === 'TOOL_CALL_ARGS').map((e) => e.data.delta)).toEqual(['{"q":"x"}']);
    expect(received.filter((e) => e.data.type === 'TOOL_CALL_RESULT').map((e) => e.data.content)).toEqual(['held x']);
    expect(texts(received)).toEqual([FIRST, SECOND]);
    expect(received.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', result: { text: SECOND } });
  });

  it('reads the runs it does not hold through a journal function (a durable runtime\'s), asking again until the end', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'actorloop-web-'));
    dirs.push(dir);
    const store = createFileStore({ dir });
    const { agent, release } = holdingAgent({ persistence: { store } });
    release();
    const { url } = await served(agent);
    const live = await new EventReader(await post(url, runInput('Look it up', 'run-durable'))).rest();
    const asked: string[] = [];
    // Served first without the end, as a database would while a worker still runs it.
    let reads = 0;
    const journal = async (runId: string) => {
      asked.push(runId);
      const entries = runId === 'run-durable' ? store.readJournal(runId).entries : [];
      return reads++ === 0 ? entries.filter((e) => e.event.type !== 'run.terminated') : entries;
    };
    const other = await served(holdingAgent().agent, { journal, pollIntervalMs: 100 });
    const replay = await new EventReader(await stream(other.url, 'run-durable', live[3]?.id)).rest();
    expect(replay.map(threadless)).toEqual(live.slice(4).map(threadless));
    expect(reads).toBeGreaterThanOrEqual(2);
    const missing = await stream(other.url, 'run-nowhere', undefined);
    expect(missing.status).toBe(404);
    expect(asked).toContain('run-nowhere');
  });

  it('refuses to serve a run the agent does not have and that no store was given for', async () => {
    const { agent } = holdingAgent();
    const { url } = await served(agent);
    const response = await stream(url, 'run-unknown', '3.0');
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/give the handler the agent's store/);
  });
});

describe('a run this process holds only in part', () => {
  it("serves a live run from its first entry while another run's tokens overflow the journal, and what a reconnect missed exactly", async () => {
    const BUSY = Array.from({ length: 120 }, (_, i) => `token${i}`).join(' ');
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const hold = defineTool({ name: 'hold', description: 'Holds', input: z.object({ q: z.string() }), execute: async ({ q }) => (await released, `held ${q}`) });
    // The live run's first reply, the busy run's only one, then the live run's answer.
    const model = scriptedModel([{ text: FIRST, toolCalls: [{ name: 'hold', arguments: { q: 'x' } }] }, { text: BUSY }, { text: SECOND }]);
    const capacity = 60;
    const agent = trackAgent({ model: { provider: model, stream: true }, tools: [hold], observe: { journalCapacity: capacity } });
    const { url } = await served(agent);

    const live = new EventReader(await post(url, runInput('Look it up', 'run-live')));
    await live.until((event) => event.data.type === 'TOOL_CALL_START');
    const received = [...live.events];
    await live.drop();
    const busy = await new EventReader(await post(url, runInput('Say a lot', 'run-busy'))).rest();
    expect(busy.at(-1)?.data.type).toBe('RUN_FINISHED');

    // The busy run alone wrote more than the journal holds; the live run kept its start, and the journal its bound.
    expect(agent.journal.firstSequence('run-busy')).toBeUndefined();
    expect(agent.journal.firstSequence('run-live')).toBe(0);
    expect(agent.journal.size).toBeLessThanOrEqual(capacity);
    const response = await stream(url, 'run-live', received.at(-1)?.id);
    expect(response.status).toBe(200);
    const reconnected = new EventReader(response);
    release();
    received.push(...(await reconnected.rest()));
    const ids = received.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(texts(received)).toEqual([FIRST, SECOND]);
    const unbroken = await new EventReader(await stream(url, 'run-live', undefined)).rest();
    expect(received).toEqual(unbroken);
  });

  it("answers 410 naming journalCapacity and the store for a live run whose first entries the journal dropped, and the run goes on", async () => {
    const { agent, release } = holdingAgent({ observe: { journalCapacity: 8 } });
    const { url } = await served(agent);
    const live = new EventReader(await post(url, runInput('Look it up', 'run-long')));
    await live.until((event) => event.data.type === 'TOOL_CALL_START');
    expect(agent.journal.firstSequence('run-long')).toBeUndefined();
    const response = await stream(url, 'run-long', '3.0');
    expect(response.status).toBe(410);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/observe\.journalCapacity.*options\.store/);
    release();
    expect(texts(await live.rest())).toEqual([FIRST, SECOND]);
  });
});
