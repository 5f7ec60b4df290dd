/**
 * A run that delegates to a sub-agent, streamed through the web handler over real HTTP on
 * 127.0.0.1 with the sub-agent's run in the same stream: AG-UI's HttpAgent and the AI SDK's
 * reader see which agent each event comes from, and a page that reconnects anywhere in the
 * sub-agent's part gets exactly the events it missed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpAgent } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';
import type { BaseEvent } from '@ag-ui/core';
import { readUIMessageStream, type UIMessage } from 'ai';
import { z } from 'zod';
import type { AgentConfig } from '../../src/agent/config.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { createAgUiHandler } from '../../src/web/agUi.ts';
import { createAiSdkHandler } from '../../src/web/aiSdk.ts';
import type { WebHandler } from '../../src/web/handler.ts';
import { formatTreeEventId, parseTreeEventId } from '../../src/web/treeSse.ts';
import type { AgentSystem } from '../../src/system/types.ts';
import { trackedSystem } from '../system/helpers.ts';
import { delegation } from './fixtures/delegation.ts';
import { chunksOf, add, EventReader, post, runInput, serve, type Served, type SseEvent } from './support.ts';

const servers: Served[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function served(handler: WebHandler): Promise<Served> {
  const server = await serve(handler);
  servers.push(server);
  return server;
}

const typed = (events: readonly BaseEvent[], type: string) => events.filter((e) => e.type === type) as (BaseEvent & Record<string, unknown>)[];

describe("a sub-agent's wait for a human, answered from the page", () => {
  it('is approved through the handler by its run id: the sub-agent makes its call and the served run ends with its answer', { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    delegation(system, [add(true)], 'add');
    const { url } = await served(createAgUiHandler(system.get('lead').agent, { system }));
    const reader = new EventReader(await post(url, runInput('What is 20 + 22?', 'run-lead')));
    const waiting = await reader.until(({ data }) => data.type === 'SUBAGENT_FINISHED' && (data.outcome as { type?: string } | undefined)?.type === 'suspended');
    const sub = waiting.data.subagentRunId as string;
    expect(system.get('researcher').agent.handle(sub)?.phase()).toBe('awaitingHuman');

    // A call the sub-run is not waiting on is refused, and the run still waits.
    expect((await post(`${url}/runs/${sub}/approve`, { toolCallIds: ['call_9_9'] })).status).toBe(409);
    // The served AG-UI run ends with the sub-run's interrupt; the page streams on from there once it decided.
    const first = await reader.rest();
    expect(first.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-lead', outcome: { type: 'interrupt', interrupts: [{ id: `${sub}/call_0_0`, subagentRunId: sub }] } });
    const approved = await post(`${url}/runs/${sub}/approve`, {});
    expect(approved.status).toBe(202);
    const events = await new EventReader(await fetch(`${url}/runs/run-lead/stream`, { headers: { 'last-event-id': first.at(-1)?.id as string } })).rest();
    expect(events[0]?.data).toMatchObject({ type: 'RUN_STARTED', runId: 'run-lead' });
    const results = events.filter(({ data }) => data.type === 'TOOL_CALL_RESULT').map(({ data }) => [data.content, data.subagentRunId]);
    expect(results).toEqual([
      ['42', sub],
      ['It is 42.', undefined],
    ]);
    expect(events.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-lead' });
  });
});

describe('a delegating run consumed by HttpAgent', () => {
  it("shows the sub-agent's run as SUBAGENT events and attributes its text and tool call to it", { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    delegation(system, [add()], 'add');
    const { url } = await served(createAgUiHandler(system.get('lead').agent, { system }));
    const client = new HttpAgent({ url, threadId: 'thread-1', initialMessages: [{ id: 'u1', role: 'user', content: 'What is 20 + 22?' }] });
    const events: BaseEvent[] = [];
    await client.runAgent({ runId: 'run-lead' }, { onEvent: ({ event }) => void events.push(EventSchemas.parse(event)) });

    const [started] = typed(events, 'SUBAGENT_STARTED');
    expect(started).toMatchObject({ name: 'researcher' });
    const sub = started?.subagentRunId as string;
    expect(system.get('researcher').agent.journal.entries(sub)[1]?.event.type).toBe('run.started');
    // The researcher's call is its own; the lead's delegation is the lead's.
    const calls = typed(events, 'TOOL_CALL_START').map((e) => [e.toolCallName, e.subagentRunId]);
    expect(calls).toEqual([
      ['delegate_to_researcher', undefined],
      ['add', sub],
    ]);
    expect(typed(events, 'TOOL_CALL_RESULT').map((e) => [e.content, e.subagentRunId])).toEqual([
      ['42', sub],
      ['It is 42.', undefined],
    ]);
    const text = (owner: string | undefined) =>
      typed(events, 'TEXT_MESSAGE_CONTENT')
        .filter((e) => e.subagentRunId === owner)
        .map((e) => e.delta)
        .join('');
    expect(text(sub)).toBe('Adding them.It is 42.');
    expect(text(undefined)).toBe('Asking the researcher.The researcher says 42.');
    expect(typed(events, 'SUBAGENT_FINISHED')).toEqual([expect.objectContaining({ subagentRunId: sub, outcome: { type: 'success' } })]);
    // One run: the sub-agent's start and end are not the stream's.
    expect(typed(events, 'RUN_STARTED')).toHaveLength(1);
    expect(events.at(-1)?.type).toBe('RUN_FINISHED');
    expect(client.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'The researcher says 42.' });
  });

  it("sends the lead's model the page's history without the sub-agent's text and calls, which were never the lead's", { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const researcher = scriptedModel([{ text: 'Adding them.', toolCalls: [{ name: 'add', arguments: { a: 20, b: 22 } }] }, { text: 'It is 42.' }]);
    const lead = scriptedModel([{ text: 'Asking the researcher.', toolCalls: [{ name: 'delegate_to_researcher', arguments: { task: 'Add 20 and 22.' } }] }, { text: 'The researcher says 42.' }, { text: 'You are welcome.' }]);
    system.spawn('researcher', { model: { provider: researcher, stream: true }, tools: [add()] });
    system.spawn('lead', { model: { provider: lead, stream: true }, tools: [system.delegateTool('researcher')] });
    const { url } = await served(createAgUiHandler(system.get('lead').agent, { system }));
    const client = new HttpAgent({ url, threadId: 'thread-h', initialMessages: [{ id: 'u1', role: 'user', content: 'What is 20 + 22?' }] });
    await client.runAgent({ runId: 'run-h1' });
    expect(client.messages.some((m) => (m as { subagentRunId?: string }).subagentRunId !== undefined)).toBe(true);

    client.addMessage({ id: 'u2', role: 'user', content: 'Thanks' });
    await client.runAgent({ runId: 'run-h2' });

    const sent = lead.calls[2]?.messages ?? [];
    expect(JSON.stringify(sent)).not.toContain('Adding them.');
    expect(sent.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((call) => call.name) : []))).toEqual(['delegate_to_researcher']);
    expect(sent.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['It is 42.']);
    expect(sent.filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual(['Asking the researcher.', 'The researcher says 42.']);
  });

  it('keeps single-run event ids for a run that delegates nothing, and refuses an id that is no cursor of the stream', async () => {
    const { system } = trackedSystem();
    system.spawn('solo', { model: scriptedModel([{ text: 'Alone.' }]) });
    const { url } = await served(createAgUiHandler(system.get('solo').agent, { system }));
    const events = await new EventReader(await post(url, runInput('Hi', 'run-solo'))).rest();
    expect(events.length).toBeGreaterThan(3);
    for (const { id } of events) expect(id).toMatch(/^\d+\.\d+$/);
    const refused = await fetch(`${url}/runs/run-solo/stream`, { headers: { 'last-event-id': '3.0,x@1.0' } });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('12.0,1@3.2');
  });
});


describe('a delegating run read by the AI SDK', () => {
  it("puts the sub-agent's text and tool call in the message, each saying the agent, with a part for the sub-agent", { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    delegation(system, [add()], 'add');
    const { url } = await served(createAiSdkHandler(system.get('lead').agent, { system }));
    const body = { id: 'chat-1', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'What is 20 + 22?' }] }], trigger: 'submit-message' };
    const response = await post(url, body);
    let message: UIMessage | undefined;
    for await (const m of readUIMessageStream({ stream: chunksOf(response.body as ReadableStream<Uint8Array>) })) message = m;

    const parts = (message?.parts ?? []) as (Record<string, unknown> & { type: string })[];
    const agentPart = parts.find((p) => p.type === 'data-actorloop.agent');
    const sub = (agentPart?.data as { runId: string }).runId;
    expect(agentPart?.data).toMatchObject({ agentId: 'researcher', status: 'finished', parentRunId: message?.id });
    const texts = parts.filter((p) => p.type === 'text').map((p) => [p.text, (p.providerMetadata as { actorloop?: { agentId: string } } | undefined)?.actorloop?.agentId]);
    expect(texts).toEqual([
      ['Asking the researcher.', undefined],
      ['Adding them.', 'researcher'],
      ['It is 42.', 'researcher'],
      ['The researcher says 42.', undefined],
    ]);
    const tools = parts.filter((p) => p.type.startsWith('tool-')).map((p) => [p.type, p.output, p.toolMetadata]);
    expect(tools).toEqual([
      ['tool-delegate_to_researcher', 'It is 42.', undefined],
      ['tool-add', '42', { agentId: 'researcher', runId: sub }],
    ]);
  });
});

describe('a delegating run read by the AI SDK, then asked again', () => {
  it("sends the lead's model the chat's history without the sub-agent's text and calls, which were never the lead's", { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const researcher = scriptedModel([{ text: 'Adding them.', toolCalls: [{ name: 'add', arguments: { a: 20, b: 22 } }] }, { text: 'It is 42.' }]);
    const lead = scriptedModel([{ text: 'Asking the researcher.', toolCalls: [{ name: 'delegate_to_researcher', arguments: { task: 'Add 20 and 22.' } }] }, { text: 'The researcher says 42.' }, { text: 'You are welcome.' }]);
    system.spawn('researcher', { model: { provider: researcher, stream: true }, tools: [add()] });
    system.spawn('lead', { model: { provider: lead, stream: true }, tools: [system.delegateTool('researcher')] });
    const { url } = await served(createAiSdkHandler(system.get('lead').agent, { system }));
    const question = { id: 'u1', role: 'user' as const, parts: [{ type: 'text' as const, text: 'What is 20 + 22?' }] };
    let answer: UIMessage | undefined;
    const first = await post(url, { id: 'chat-h', messages: [question], trigger: 'submit-message' });
    for await (const m of readUIMessageStream({ stream: chunksOf(first.body as ReadableStream<Uint8Array>) })) answer = m;
    expect(answer?.parts.some((p) => p.type === 'tool-add')).toBe(true);

    const thanks = { id: 'u2', role: 'user' as const, parts: [{ type: 'text' as const, text: 'Thanks' }] };
    const second = await post(url, { id: 'chat-h', messages: [question, answer, thanks], trigger: 'submit-message' });
    await second.text();

    const sent = lead.calls[2]?.messages ?? [];
    expect(JSON.stringify(sent)).not.toContain('Adding them.');
    expect(sent.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((call) => call.name) : []))).toEqual(['delegate_to_researcher']);
    expect(sent.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['It is 42.']);
    // Each of the lead's turns is its own message, its call's result between them, as the lead's run had it.
    expect(sent.map((m) => (m.role === 'assistant' ? m.content : m.role))).toEqual(['user', 'Asking the researcher.', 'tool', 'The researcher says 42.', 'user']);
  });
});

describe('vector event ids', () => {
  it('read back as the positions they were written from, a single run\'s id as its own', () => {
    const position = fc.record({ sequence: fc.nat({ max: 10 ** 12 }), index: fc.oneof(fc.nat({ max: 999 }), fc.constant(Number.MAX_SAFE_INTEGER)) });
    const key = fc.array(fc.integer({ min: 1, max: 99 }), { minLength: 1, maxLength: 3 }).map((ranks) => ranks.join('-'));
    fc.assert(
      fc.property(position, fc.dictionary(key, position, { maxKeys: 5 }), (root, subs) => {
        const cursor = new Map([['', root], ...Object.entries(subs)]);
        const id = formatTreeEventId(cursor);
        expect(id).not.toMatch(/[\n\r\0]/);
        expect(parseTreeEventId(id)).toEqual(cursor);
        if (Object.keys(subs).length === 0) expect(id).toBe(`${root.sequence}.${root.index}`);
      }),
    );
  });
});

describe('reconnecting to a delegating run', () => {
  /** A researcher that holds in its tool until `release()`, so a page can lose the stream in the middle of the sub-agent's part. */
  function holding(system: AgentSystem, persistence?: AgentConfig['persistence']) {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const hold = defineTool({ name: 'hold', description: 'Holds', input: z.object({ q: z.string() }), execute: async ({ q }) => (await released, `held ${q}`) });
    delegation(system, [hold], 'hold', persistence);
    return release;
  }
  /** Each run's events (the served run's under ''), in the order they came, without their ids and thread id. */
  const byRun = (events: readonly SseEvent[]) => {
    const runs = new Map<string, unknown[]>();
    for (const event of events) {
      const owner = typeof event.data.subagentRunId === 'string' ? event.data.subagentRunId : '';
      runs.set(owner, [...(runs.get(owner) ?? []), threadless(event).data]);
    }
    return runs;
  };
  /** An event without its thread id, which only the process the run was started in was told. */
  const threadless = ({ id, data }: SseEvent): SseEvent => {
    const { threadId: _threadId, ...rest } = data;
    return { id, data: rest };
  };
  const stream = (url: string, runId: string, after: string | undefined) => fetch(`${url}/runs/${runId}/stream`, after === undefined ? {} : { headers: { 'last-event-id': after } });
  const inSub = (e: SseEvent) => typeof e.data.subagentRunId === 'string';

  it("gives exactly the missed events of both runs, wherever in the sub-agent's part the connection dropped", { timeout: 90_000 }, async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 60 }), fc.array(fc.integer({ min: 1, max: 12 }), { maxLength: 3 }), async (first, later) => {
        const { system } = trackedSystem();
        const release = holding(system);
        const { url } = await served(createAgUiHandler(system.get('lead').agent, { system }));
        const runId = `run-tree-${n++}`;

        // The first connection reads into the researcher's held call, then the page keeps only `first` of what came.
        const start = new EventReader(await post(url, runInput('What is it?', runId)));
        await start.until((e) => inSub(e) && e.data.type === "TOOL_CALL_END");
        const received = start.events.slice(0, Math.min(first, start.events.length));
        await start.drop();
        release();
        for (const cut of later) {
          const reader = new EventReader(await stream(url, runId, received.at(-1)?.id));
          received.push(...(await reader.take(cut)));
          await reader.drop();
        }
        received.push(...(await new EventReader(await stream(url, runId, received.at(-1)?.id)).rest()));

        const ids = received.map((e) => e.id);
        expect(new Set(ids).size).toBe(ids.length);
        const unbroken = await new EventReader(await stream(url, runId, undefined)).rest();
        expect(received.map((e) => e.data)).toEqual(unbroken.map((e) => e.data));
        expect(received.filter(inSub).find((e) => e.data.type === 'TOOL_CALL_RESULT')?.data.content).toBe('held x');
        expect(received.at(-1)?.data.type).toBe('RUN_FINISHED');
        // Once the sub-agent has events, ids carry its position beside the lead's.
        expect(received.filter(inSub).every((e) => /^\d+\.\d+,1@\d+\.\d+$/.test(e.id ?? ''))).toBe(true);
      }),
      { numRuns: 8 },
    );
  });

  it("is served by another process from the store, the sub-agent's part included, from a cursor inside it", { timeout: 30_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'actorloop-web-tree-'));
    dirs.push(dir);
    const first = trackedSystem().system;
    const release = holding(first, { store: createFileStore({ dir }) });
    const one = await served(createAgUiHandler(first.get('lead').agent, { system: first }));
    const reader = new EventReader(await post(one.url, runInput('What is it?', 'run-tree-elsewhere')));
    const cut = await reader.until((e) => inSub(e) && e.data.type === 'TEXT_MESSAGE_CONTENT');
    release();
    const live = await reader.rest();

    // Another process: its own agents of the same ids, no run in memory, the same store.
    const second = trackedSystem().system;
    holding(second, { store: createFileStore({ dir }) });
    const two = await served(createAgUiHandler(second.get('lead').agent, { system: second, store: createFileStore({ dir }) }));
    const rest = await new EventReader(await stream(two.url, 'run-tree-elsewhere', cut.id)).rest();
    // Each run's events after the cursor, once and in order; read from the store, the runs arrive one after the other.
    const missed = live.slice(live.indexOf(cut) + 1);
    expect(byRun(rest)).toEqual(byRun(missed));
    expect(new Set(rest.map((e) => e.id)).size).toBe(rest.length);
    expect(rest.filter(inSub).length).toBeGreaterThan(3);
  });
});
