/**
 * A reasoning strategy served through the strategy handler over real HTTP on 127.0.0.1: the
 * runner's decisions are the served run, each branch's sub-agent run a sub-run attributed to
 * it, the strategy's answer the served run's text; a page reconnects to exactly what it missed
 * and cancels the strategy.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HttpAgent } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';
import type { BaseEvent } from '@ag-ui/core';
import { readUIMessageStream, type UIMessage } from 'ai';
import { startStrategy, strategies, type StrategyRun } from '../../src/strategies/index.ts';
import type { SubAgentSource } from '../../src/strategies/subAgent.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { agUiProtocol } from '../../src/web/agUi.ts';
import { aiSdkProtocol } from '../../src/web/aiSdk.ts';
import { createStrategyHandler, type StrategyStart } from '../../src/web/strategyHandler.ts';
import { chatBody, chunksOf, EventReader, pacedModel, post, runInput, serve, type Served } from './support.ts';

const servers: Served[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const REPLIES = ['42', 'It is 42.', '7'];

/** Each sample answers from REPLIES by its index; `gate` holds the streamed text of the samples it is given. */
function samples(gate?: { provider: ReturnType<typeof pacedModel>; held: readonly number[] }): SubAgentSource {
  return (_branch, info) => {
    const model = scriptedModel([{ text: REPLIES[info.index] ?? '' }]);
    const paced = gate !== undefined && gate.held.includes(info.index);
    return { model: paced ? { provider: gate.provider.provider, stream: true } : model, resilience: { breakers: false } };
  };
}

async function served(subAgent: SubAgentSource, protocol: typeof agUiProtocol | typeof aiSdkProtocol, started?: (run: StrategyRun) => void): Promise<string> {
  const start = ({ task, runId }: StrategyStart) => startStrategy({ strategy: strategies.vote({ samples: 3 }), task, subAgent, ...(runId === undefined ? {} : { runId }) });
  const server = await serve(createStrategyHandler(start, protocol as typeof agUiProtocol, started === undefined ? {} : { onRun: started }));
  servers.push(server);
  return server.url;
}

const typed = (events: readonly BaseEvent[], type: string) => events.filter((e) => e.type === type) as (BaseEvent & Record<string, unknown>)[];

describe('a strategy consumed by HttpAgent', () => {
  it("streams each branch as a sub-agent with its own text, and the strategy's answer as the run's text", { timeout: 30_000 }, async () => {
    const url = await served(samples(), agUiProtocol);
    const client = new HttpAgent({ url, threadId: 'thread-1', initialMessages: [{ id: 'u1', role: 'user', content: 'What is 6 * 7?' }] });
    const events: BaseEvent[] = [];
    await client.runAgent({ runId: 'run-vote' }, { onEvent: ({ event }) => void events.push(EventSchemas.parse(event)) });

    const branches = typed(events, 'SUBAGENT_STARTED').map((e) => e.subagentRunId as string);
    expect(branches.toSorted()).toEqual(['run-vote-r1-b0', 'run-vote-r1-b1', 'run-vote-r1-b2']);
    expect(typed(events, 'SUBAGENT_FINISHED').map((e) => e.subagentRunId).toSorted()).toEqual(branches.toSorted());
    // Each sample's reply is attributed to its own branch.
    const texts = typed(events, 'TEXT_MESSAGE_CONTENT').map((e) => [e.subagentRunId ?? 'strategy', e.delta]);
    expect(texts.filter(([owner]) => owner !== 'strategy').toSorted()).toEqual([
      ['run-vote-r1-b0', '42'],
      ['run-vote-r1-b1', 'It is 42.'],
      ['run-vote-r1-b2', '7'],
    ]);
    // The answer is the served run's own text, sent last, and its result.
    expect(texts.filter(([owner]) => owner === 'strategy')).toEqual([['strategy', '42']]);
    const decided = typed(events, 'CUSTOM').filter((e) => e.name === 'actorloop.strategy.decided' && e.subagentRunId === undefined);
    expect(decided.map((e) => (e.value as { decision: string }).decision)).toEqual(['branch', 'done']);
    expect(typed(events, 'CUSTOM').filter((e) => e.name === 'actorloop.branch.finished')).toHaveLength(3);
    const last = events.at(-1) as BaseEvent & { runId?: string; result?: { text?: string } };
    expect(last).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-vote', result: { text: '42', reason: 'final_answer' } });
  });
});


describe('a strategy read by the AI SDK', () => {
  it("puts each branch's reply in the message saying its run, a part per branch, and the answer as the message's own text", { timeout: 30_000 }, async () => {
    const url = await served(samples(), aiSdkProtocol);
    const response = await post(url, { id: 'chat-1', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'What is 6 * 7?' }] }] });
    expect(response.status).toBe(200);
    let message: UIMessage | undefined;
    for await (const m of readUIMessageStream({ stream: chunksOf(response.body as ReadableStream<Uint8Array>) })) message = m;

    const parts = (message?.parts ?? []) as (Record<string, unknown> & { type: string })[];
    const agents = parts.filter((p) => p.type === 'data-actorloop.agent').map((p) => p.data as { runId: string; status: string; parentRunId: string });
    expect(agents).toHaveLength(3);
    expect(agents.every((a) => a.status === 'finished' && a.parentRunId === message?.id)).toBe(true);
    const texts = parts.filter((p) => p.type === 'text').map((p) => [p.text, (p.providerMetadata as { actorloop?: { runId: string } } | undefined)?.actorloop?.runId ?? 'strategy']);
    const byRun = new Map(agents.map((a) => [a.runId.slice(-2), a.runId]));
    expect(texts.slice(0, -1).toSorted()).toEqual([
      ['42', byRun.get('b0')],
      ['7', byRun.get('b2')],
      ['It is 42.', byRun.get('b1')],
    ]);
    expect(texts.at(-1)).toEqual(['42', 'strategy']);
  });
});

describe('a strategy stream a page reconnects to', () => {
  it('gets exactly the events it missed, mid-run, with no id twice', { timeout: 30_000 }, async () => {
    const gate = pacedModel(scriptedModel([{ text: 'The answer is 42.' }]));
    const url = await served(samples({ provider: gate, held: [2] }), agUiProtocol);
    const first = new EventReader(await post(url, runInput('What is 6 * 7?', 'run-cut')));
    // Cut the stream once the held branch has started and the others have answered.
    await first.until((e) => e.data.type === 'SUBAGENT_STARTED' && e.data.subagentRunId === 'run-cut-r1-b2');
    await first.whilst(() => first.events.filter((e) => e.data.type === 'SUBAGENT_FINISHED').length < 2);
    await first.drop();
    const seen = first.events;
    const lastId = seen.at(-1)?.id as string;

    const resumed = new EventReader(await fetch(`${url}/runs/run-cut/stream`, { headers: { 'last-event-id': lastId } }));
    gate.release(100);
    const rest = await resumed.rest();
    const unbroken = await new EventReader(await fetch(`${url}/runs/run-cut/stream`)).rest();

    expect([...seen, ...rest].map((e) => [e.id, e.data])).toEqual(unbroken.map((e) => [e.id, e.data]));
    const ids = unbroken.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(rest.some((e) => e.data.type === 'TEXT_MESSAGE_CONTENT' && e.data.subagentRunId === 'run-cut-r1-b2')).toBe(true);
    expect(rest.at(-1)?.data.type).toBe('RUN_FINISHED');
  });
});

describe('a strategy cancelled from the page', () => {
  it('stops the strategy, and the stream ends with the run cancelled', { timeout: 30_000 }, async () => {
    const gate = pacedModel(scriptedModel([{ text: 'never sent' }, { text: 'never sent' }, { text: 'never sent' }]));
    let run: StrategyRun | undefined;
    const url = await served(samples({ provider: gate, held: [0, 1, 2] }), agUiProtocol, (r) => (run = r));
    const reader = new EventReader(await post(url, runInput('What is 6 * 7?', 'run-stop')));
    await reader.whilst(() => reader.events.filter((e) => e.data.type === 'SUBAGENT_STARTED').length < 3);

    const cancelled = await post(`${url}/runs/run-stop/cancel`, { reason: 'the page closed' });
    expect(cancelled.status).toBe(202);
    const events = await reader.rest();
    expect(events.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-stop', outcome: { type: 'cancelled' } });
    // Each branch's run was stopped with the strategy: the page sees every sub-agent end.
    const started = events.flatMap(({ data }) => (data.type === 'SUBAGENT_STARTED' ? [data.subagentRunId] : []));
    const ended = events.flatMap(({ data }) => (data.type === 'SUBAGENT_ERROR' && data.code === 'cancelled' ? [data.subagentRunId] : []));
    expect(started).toHaveLength(3);
    expect(ended.sort()).toEqual([...started].sort());
    expect((await run?.settled)?.status).toBe('cancelled');
    // An ended run has nothing left to cancel; a run this server never started is not found.
    expect((await post(`${url}/runs/run-stop/cancel`, {})).status).toBe(409);
    expect((await fetch(`${url}/runs/unknown/stream`)).status).toBe(404);
  });
});

describe('requests a strategy handler refuses', () => {
  it('refuses a run id in use, a decision, and a resume, each with what to send instead', { timeout: 30_000 }, async () => {
    const url = await served(samples(), agUiProtocol);
    await new EventReader(await post(url, runInput('What is 6 * 7?', 'run-once'))).rest();
    const again = await post(url, runInput('What is 6 * 7?', 'run-once'));
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { message: string } }).error.message).toContain('GET runs/run-once/stream');
    expect((await post(`${url}/runs/run-once/approve`, {})).status).toBe(404);
    const resume = { ...runInput('x', 'run-2'), resume: [{ interruptId: 'run-once/call-1', status: 'resolved', payload: { approved: true } }] };
    expect((await post(url, resume)).status).toBe(400);
  });

  it('refuses a useChat task with a file, saying a strategy takes text, and starts nothing', async () => {
    let started = 0;
    const url = await served(samples(), aiSdkProtocol, () => started++);
    const parts = [{ type: 'text', text: 'What is in it?' }, { type: 'file', mediaType: 'application/pdf', url: 'data:application/pdf;base64,JVBERi0=' }];
    const refused = await post(url, chatBody([{ id: 'u1', role: 'user', parts } as UIMessage]));
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/strategy's task is text/);
    expect(started).toBe(0);
  });
});
