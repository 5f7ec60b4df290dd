/**
 * AG-UI through the web handler, over real HTTP on 127.0.0.1: `@ag-ui/client`'s HttpAgent
 * consumes runs, a page approves, rejects and cancels with POSTs, and bad requests get a 4xx.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HttpAgent } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';
import type { BaseEvent, Message as AgUiMessage, ResumeEntry } from '@ag-ui/core';
import { z } from 'zod';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { createAgUiHandler } from '../../src/web/agUi.ts';
import { APPROVAL_SCHEMA } from '../../src/events/agUiEncoder.ts';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import type { AgentRun } from '../../src/agent/types.ts';
import { RunCancelledError } from '../../src/agent/errors.ts';
import { stopTrackedAgents, trackAgent } from '../support/agents.ts';
import { add, EventReader, post, runInput, serve, type Served } from './support.ts';

let served: Served | undefined;
afterEach(async () => {
  stopTrackedAgents();
  await served?.close();
  served = undefined;
});

const question: AgUiMessage = { id: 'u1', role: 'user', content: 'What is 1 + 2?' };

/** Runs `client` to its end, every event checked against AG-UI's schemas; `onEvent` sees each first. */
async function consume(client: HttpAgent, runId: string, onEvent: (event: BaseEvent) => void = () => undefined, resume?: ResumeEntry[]): Promise<BaseEvent[]> {
  const events: BaseEvent[] = [];
  await client.runAgent(
    { runId, ...(resume === undefined ? {} : { resume }) },
    {
      onEvent: ({ event }) => {
        EventSchemas.parse(event);
        events.push(event);
        onEvent(event);
      },
    },
  );
  return events;
}

const typed = <T extends string>(events: readonly BaseEvent[], type: T) => events.filter((e) => e.type === type) as (BaseEvent & Record<string, unknown>)[];

describe('a run consumed by HttpAgent', () => {
  it('reassembles the streamed text, the tool call with its arguments and its result, and ends with the usage', async () => {
    const model = scriptedModel([{ text: 'Let me add.', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'The sum is 3.' }]);
    const agent = trackAgent({ model: { provider: model, stream: true }, tools: [add()] });
    const entries: JournalEntry[] = [];
    agent.events$.subscribe((entry) => entries.push(entry));
    served = await serve(createAgUiHandler(agent));
    const client = new HttpAgent({ url: served.url, threadId: 'thread-1', initialMessages: [question] });

    const events = await consume(client, 'run-plain');

    expect(client.messages.map(({ id: _id, ...rest }) => rest)).toEqual([
      { role: 'user', content: 'What is 1 + 2?' },
      { role: 'assistant', content: 'Let me add.', toolCalls: [{ id: 'call_0_0', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } }] },
      { role: 'tool', toolCallId: 'call_0_0', content: '3' },
      { role: 'assistant', content: 'The sum is 3.' },
    ]);
    // Text arrived as the model streamed it: token deltas in order, those that waited for the reader joined.
    const tokens = entries.flatMap((e) => (e.event.type === 'token.delta' ? [e.event.delta] : []));
    const contents = typed(events, 'TEXT_MESSAGE_CONTENT').map((e) => e.delta as string);
    expect(contents.join('')).toBe(tokens.join(''));
    expect(contents.length).toBeGreaterThanOrEqual(2);
    expect(contents.length).toBeLessThanOrEqual(tokens.length);
    expect(typed(events, 'STEP_STARTED').map((e) => e.stepName)).toEqual(['hydrate', 'reason', 'gate', 'act', 'observe', 'reason']);
    expect(typed(events, 'STEP_FINISHED')).toHaveLength(6);
    const terminated = entries.find((e) => e.event.type === 'run.terminated')?.event;
    const finished = typed(events, 'RUN_FINISHED');
    expect(finished).toHaveLength(1);
    expect(finished[0]).toMatchObject({ threadId: 'thread-1', runId: 'run-plain', outcome: { type: 'success' } });
    expect(finished[0]?.result).toEqual({ reason: 'final_answer', iterations: 2, text: 'The sum is 3.', usage: terminated?.type === 'run.terminated' ? terminated.usage : undefined });
    expect(events.at(-1)?.type).toBe('RUN_FINISHED');
    // The gate's decision is visible to the page.
    expect(typed(events, 'CUSTOM').find((e) => e.name === 'actorloop.policy.evaluated')?.value).toMatchObject({ toolCallId: 'call_0_0', decision: 'allow' });
  });

  it('keeps each call with its own arguments and result when the model numbers its calls anew each turn (Kimi via vLLM: add:0 every turn)', async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: 'add:0', name: 'add', arguments: { a: 1, b: 2 } }] },
      { toolCalls: [{ id: 'add:0', name: 'add', arguments: { a: 3, b: 4 } }] },
      { text: 'Done.' },
    ]);
    const agent = trackAgent({ model: { provider: model, stream: true }, tools: [add()] });
    served = await serve(createAgUiHandler(agent));
    const client = new HttpAgent({ url: served.url, threadId: 'thread-ids', initialMessages: [question] });

    await consume(client, 'run-ids');

    const calls = client.messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : []));
    expect(calls.map((call) => call.function.arguments)).toEqual(['{"a":1,"b":2}', '{"a":3,"b":4}']);
    const results = client.messages.flatMap((m) => (m.role === 'tool' ? [[m.toolCallId, m.content]] : []));
    expect(results).toEqual([
      [calls[0]?.id, '3'],
      [calls[1]?.id, '7'],
    ]);
  });

  it('sends a reply that was not streamed whole, and takes the earlier messages as the history', async () => {
    const model = scriptedModel([{ text: 'It is still 3.' }]);
    const agent = trackAgent({ model, tools: [add()] });
    served = await serve(createAgUiHandler(agent));
    const history: AgUiMessage[] = [
      { id: 's', role: 'system', content: 'Answer briefly.' },
      question,
      { id: 'a1', role: 'assistant', content: '3' },
      { id: 'u2', role: 'user', content: 'And now?' },
    ];
    const client = new HttpAgent({ url: served.url, threadId: 'thread-2', initialMessages: history });

    const events = await consume(client, 'run-history');

    expect(typed(events, 'TEXT_MESSAGE_CONTENT').map((e) => e.delta)).toEqual(['It is still 3.']);
    expect(client.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'It is still 3.' });
    const sent = model.calls[0]?.messages.map((m) => [m.role, m.content]);
    expect(sent).toEqual(expect.arrayContaining([['user', 'What is 1 + 2?'], ['assistant', '3'], ['user', 'And now?']]));
    expect(sent?.at(-1)).toEqual(['user', 'And now?']);
  });

  it('ends a failed run with RUN_ERROR carrying the error code', async () => {
    const model = scriptedModel([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }] }]);
    const agent = trackAgent({ model, tools: [add()], limits: { maxIterations: 1 } });
    served = await serve(createAgUiHandler(agent));
    const response = await post(served.url, runInput('Loop', 'run-fails'));
    const events = await new EventReader(response).rest();
    expect(events.at(-1)?.data).toMatchObject({ type: 'RUN_ERROR', code: 'max_iterations' });
    expect(events.filter((e) => e.data.type === 'RUN_FINISHED')).toEqual([]);
  });
});

describe('secrets on the way to the page', () => {
  it('redacts tool arguments and results with the default rules and the handler’s own', async () => {
    const echo = defineTool({ name: 'echo', description: 'Echoes', input: z.object({ key: z.string() }), execute: ({ key }) => `stored ${key} for tenant-acme-7` });
    const model = scriptedModel([{ toolCalls: [{ name: 'echo', arguments: { key: 'sk-live0123456789abcdef' } }] }, { text: 'Stored.' }]);
    const agent = trackAgent({ model, tools: [echo] });
    served = await serve(createAgUiHandler(agent, { redact: { secrets: ['tenant-acme-7'] } }));
    const events = await new EventReader(await post(served.url, runInput('Store my key', 'run-secret'))).rest();
    const args = events.find((e) => e.data.type === 'TOOL_CALL_ARGS')?.data.delta as string;
    const result = events.find((e) => e.data.type === 'TOOL_CALL_RESULT')?.data.content as string;
    expect(args).toContain('"key"');
    expect(result).toContain('stored');
    const wire = JSON.stringify(events);
    expect(wire).not.toContain('sk-live0123456789abcdef');
    expect(wire).not.toContain('tenant-acme-7');
  });
});

describe('a human decision from the page', () => {
  const confirmingAgent = (script: Parameters<typeof scriptedModel>[0]) => {
    const model = scriptedModel(script);
    return { model, agent: trackAgent({ model: { provider: model, stream: true }, tools: [add(true)] }) };
  };

  it('leaves a call the page never answered out of the history when the person asks something else instead', async () => {
    const { model, agent } = confirmingAgent([{ text: 'Let me add.', toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: 'Sure, something else.' }]);
    served = await serve(createAgUiHandler(agent));
    const client = new HttpAgent({ url: served.url, threadId: 't-ignored', initialMessages: [question] });
    await consume(client, 'run-ignored');
    expect(client.messages.some((m) => m.role === 'assistant' && (m.toolCalls ?? []).length > 0)).toBe(true);

    const messages = [...client.messages, { id: 'u2', role: 'user' as const, content: 'Never mind, something else.' }];
    const response = await post(served.url, { threadId: 't-ignored', runId: 'run-other', state: {}, messages, tools: [], context: [], forwardedProps: {} });
    await response.text();

    const sent = model.calls[1]?.messages ?? [];
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(sent[1]).toEqual({ role: 'assistant', content: 'Let me add.' });
  });

  it('ends the AG-UI run at the wait with the interrupt outcome; resume entries approving it continue the run to its end', async () => {
    const { agent } = confirmingAgent([{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: '5' }]);
    served = await serve(createAgUiHandler(agent));
    const client = new HttpAgent({ url: served.url, threadId: 't', initialMessages: [question] });

    const first = await consume(client, 'run-interrupt');
    const interrupt = { id: 'run-interrupt/call_0_0', reason: 'confirmation', message: 'Waiting for human confirmation.', toolCallId: 'call_0_0', responseSchema: APPROVAL_SCHEMA };
    expect(first.at(-1)).toEqual({ type: 'RUN_FINISHED', threadId: 't', runId: 'run-interrupt', outcome: { type: 'interrupt', interrupts: [interrupt] } });
    expect(client.pendingInterrupts).toEqual([interrupt]);
    // The wait is also the loop's own event, for pages that show it.
    expect(typed(first, 'CUSTOM').find((e) => e.name === 'actorloop.human.awaiting')?.value).toEqual({
      type: 'human.awaiting',
      kind: 'confirmation',
      toolCallIds: ['call_0_0'],
      reasons: [{ toolCallId: 'call_0_0', reason: 'Waiting for human confirmation.' }],
    });

    const second = await consume(client, 'run-interrupt-2', undefined, [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }]);
    expect(second[0]).toEqual({ type: 'RUN_STARTED', threadId: 't', runId: 'run-interrupt-2' });
    expect(typed(second, 'CUSTOM').find((e) => e.name === 'actorloop.human.decided')?.value).toMatchObject({ decision: 'approve', toolCallIds: ['call_0_0'] });
    expect(second.at(-1)).toMatchObject({ type: 'RUN_FINISHED', threadId: 't', runId: 'run-interrupt-2', outcome: { type: 'success' }, result: { text: '5' } });
    expect(client.pendingInterrupts).toEqual([]);
    expect(client.messages.find((m) => m.role === 'tool')).toMatchObject({ toolCallId: 'call_0_0', content: '5' });
    expect(client.messages.at(-1)).toMatchObject({ role: 'assistant', content: '5' });
  });

  it('takes a rejection in the resume entries, with its reason, to the model as the call’s observation; a cancelled entry rejects too', async () => {
    const { agent, model } = confirmingAgent([
      { toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] },
      { toolCalls: [{ name: 'add', arguments: { a: 4, b: 5 } }] },
      { text: 'Understood, no adding.' },
    ]);
    served = await serve(createAgUiHandler(agent));
    const client = new HttpAgent({ url: served.url, threadId: 't', initialMessages: [question] });
    await consume(client, 'run-no');

    const second = await consume(client, 'run-no-2', undefined, [{ interruptId: 'run-no/call_0_0', status: 'resolved', payload: { approved: false, reason: 'not with my numbers' } }]);
    const observation = model.calls[1]?.messages.find((m) => m.role === 'tool');
    expect(observation?.content).toContain('not with my numbers');
    expect(typed(second, 'TOOL_CALL_RESULT').find((e) => e.toolCallId === 'call_0_0')?.content).toBe(observation?.content);
    // The model asked again: the run waits again, and this AG-UI run ends with the new interrupt.
    expect(second.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-no-2', outcome: { type: 'interrupt', interrupts: [{ id: 'run-no/call_1_0', toolCallId: 'call_1_0' }] } });

    const third = await consume(client, 'run-no-3', undefined, [{ interruptId: 'run-no/call_1_0', status: 'cancelled' }]);
    expect(model.calls[2]?.messages.filter((m) => m.role === 'tool').at(-1)?.content).toContain('cancelled');
    expect(third.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-no-3', outcome: { type: 'success' }, result: { text: 'Understood, no adding.' } });
  });

  it('takes a decision through the approve and reject routes too: the page streams the run on after the interrupt', async () => {
    const { agent, model } = confirmingAgent([{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: 'Understood, no adding.' }]);
    served = await serve(createAgUiHandler(agent));
    const first = await new EventReader(await post(served.url, runInput('Add 2 and 3', 'run-reject'))).rest();
    expect(first.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt' } });

    const rejection = await post(`${served.url}/runs/run-reject/reject`, { reason: 'not with my numbers' });
    expect(rejection.status).toBe(202);
    expect(await rejection.json()).toEqual({ runId: 'run-reject', action: 'reject', toolCallIds: ['call_0_0'] });
    const events = await new EventReader(await fetch(`${served.url}/runs/run-reject/stream`, { headers: { 'last-event-id': first.at(-1)?.id as string } })).rest();

    expect(events[0]?.data).toEqual({ type: 'RUN_STARTED', threadId: 'thread-1', runId: 'run-reject' });
    const observation = model.calls[1]?.messages.find((m) => m.role === 'tool');
    expect(observation?.content).toContain('not with my numbers');
    expect(events.find((e) => e.data.type === 'TOOL_CALL_RESULT')?.data.content).toBe(observation?.content);
    expect(events.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', result: { text: 'Understood, no adding.' } });
  });

  it('refuses resume entries it cannot use, and leaves the waiting run unharmed', async () => {
    const { agent } = confirmingAgent([{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: '5' }]);
    served = await serve(createAgUiHandler(agent));
    await new EventReader(await post(served.url, runInput('Add', 'run-wait'))).rest();
    const resume = (entries: unknown[], runId = 'run-wait-2') => post(served?.url as string, { ...runInput('Add', runId), resume: entries });
    const error = async (response: Response) => (expect(response.status).toBe(400), ((await response.json()) as { error: { message: string } }).error.message);

    expect(await error(await resume([{ interruptId: 'call_0_0', status: 'resolved', payload: { approved: true } }]))).toMatch(/not one this server gave/);
    expect(await error(await resume([{ interruptId: 'run-wait/call_0_0', status: 'resolved', payload: 'yes' }]))).toMatch(/wait for a decision, not an answer: resolve each with the payload \{ approved: boolean/);
    expect(await error(await resume([{ interruptId: 'run-wait/call_0_0', status: 'resolved', payload: { approved: true } }, { interruptId: 'run-other/call_0_0', status: 'cancelled' }]))).toMatch(/interrupts of 2 runs/);
    expect(await error(await resume([{ interruptId: 'run-wait/call_0_0', status: 'maybe' }]))).toMatch(/RunAgentInput: resume/);

    const events = await new EventReader(await resume([{ interruptId: 'run-wait/call_0_0', status: 'resolved', payload: { approved: true } }])).rest();
    expect(events.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-wait-2', outcome: { type: 'success' }, result: { text: '5' } });
  });

  it('cancels the run from the page: the server side ends with RunCancelledError, the page with a clean cancelled end', async () => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const slow = defineTool({
      name: 'slow',
      description: 'Waits until cancelled',
      input: z.object({}),
      execute: (_input, context) =>
        new Promise<string>((_resolve, reject) => {
          started();
          context.signal.addEventListener('abort', () => reject(context.signal.reason), { once: true });
        }),
    });
    const model = scriptedModel([{ toolCalls: [{ name: 'slow', arguments: {} }] }]);
    const agent = trackAgent({ model, tools: [slow] });
    const runs: AgentRun[] = [];
    served = await serve(createAgUiHandler(agent, { onRun: (run) => runs.push(run) }));
    const reader = new EventReader(await post(served.url, runInput('Wait', 'run-cancel')));
    await running;

    const cancel = await post(`${served.url}/runs/run-cancel/cancel`, {});
    expect(cancel.status).toBe(202);
    const events = await reader.rest();

    expect(runs).toHaveLength(1);
    await expect(runs[0]?.result).rejects.toBeInstanceOf(RunCancelledError);
    expect(events.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' }, result: { reason: 'cancelled' } });
    expect(events.filter((e) => e.data.type === 'RUN_ERROR')).toEqual([]);
    // A cancelled run takes no more decisions.
    expect((await post(`${served.url}/runs/run-cancel/cancel`, {})).status).toBe(409);
  });
});

describe('bad requests', () => {
  /** An agent whose run waits for approval of `call_0_0`, its stream read to the wait. */
  async function waitingRun() {
    const model = scriptedModel([{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: '5' }]);
    const agent = trackAgent({ model, tools: [add(true)] });
    served = await serve(createAgUiHandler(agent));
    const reader = new EventReader(await post(served.url, runInput('Add', 'run-wait')));
    await reader.until((e) => e.data.type === 'CUSTOM' && e.data.name === 'actorloop.human.awaiting');
    return { url: served.url, reader };
  }

  async function refused(response: Response, status: number, says: RegExp): Promise<void> {
    expect(response.status).toBe(status);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('web_request');
    expect(body.error.message).toMatch(says);
    expect(body.error.message).not.toContain('\n');
  }

  it('refuses malformed start requests with a 400 and starts nothing', async () => {
    const model = scriptedModel([{ text: 'never' }]);
    const agent = trackAgent({ model });
    served = await serve(createAgUiHandler(agent));
    await refused(await post(served.url, '{"threadId": '), 400, /not JSON/);
    await refused(await post(served.url, ''), 400, /no body/);
    await refused(await post(served.url, { threadId: 't' }), 400, /RunAgentInput: runId/);
    await refused(await post(served.url, { ...runInput('x', 'r1'), messages: [{ id: 'a', role: 'assistant', content: 'hi' }] }), 400, /last message must be a user message/);
    await refused(await post(served.url, runInput('x', '../../etc')), 400, /runId/);
    await refused(await fetch(served.url), 405, /POST a run's input/);
    expect(model.calls).toHaveLength(0);
  });

  it('refuses a body over maxBodyBytes with a 413, declared or streamed without a length, and starts nothing', async () => {
    const model = scriptedModel([{ text: 'never' }]);
    const agent = trackAgent({ model });
    served = await serve(createAgUiHandler(agent, { maxBodyBytes: 2000 }));
    const big = { ...runInput('x'.repeat(3000), 'r-big') };
    await refused(await post(served.url, big), 413, /larger than 2000 bytes/);
    const chunks = [JSON.stringify(big).slice(0, 1500), JSON.stringify(big).slice(1500)];
    const streamed = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(next));
      },
    });
    const response = await fetch(served.url, { method: 'POST', body: streamed, headers: { 'content-type': 'application/json' }, duplex: 'half' } as RequestInit);
    await refused(response, 413, /raise maxBodyBytes/);
    expect(model.calls).toHaveLength(0);
    const small = await post(served.url, runInput('small enough', 'r-small'));
    expect(small.status).toBe(200);
    await small.body?.cancel();
  });

  it('refuses a run id in use, unknown runs, and a bad Last-Event-ID', async () => {
    const { url } = await waitingRun();
    await refused(await post(url, runInput('again', 'run-wait')), 409, /exists already/);
    await refused(await fetch(`${url}/runs/nope/stream`), 404, /No run nope/);
    await refused(await post(`${url}/runs/nope/approve`, {}), 404, /No run nope/);
    await refused(await fetch(`${url}/runs/run-wait/stream`, { headers: { 'last-event-id': 'yesterday' } }), 400, /Last-Event-ID/);
    await refused(await fetch(`${url}/runs/run-wait/approve`), 405, /takes POST/);
    await refused(await post(`${url}/runs/%E0%A4%A/approve`, {}), 400, /percent-encoding/);
  });

  it('refuses decisions that do not fit and leaves the waiting run unharmed', async () => {
    const { url, reader } = await waitingRun();
    const interrupted = await reader.rest();
    await refused(await post(`${url}/runs/run-wait/approve`, '[1, 2'), 400, /not JSON/);
    await refused(await post(`${url}/runs/run-wait/approve`, { toolCallIds: 'call_0_0' }), 400, /toolCallIds/);
    await refused(await post(`${url}/runs/run-wait/reject`, { reason: 'no', extra: true }), 400, /extra/);
    await refused(await post(`${url}/runs/run-wait/approve`, { toolCallIds: ['call_9_9'] }), 409, /call_9_9 of run run-wait are not waiting; waiting: call_0_0/);

    expect((await post(`${url}/runs/run-wait/approve`, {})).status).toBe(202);
    const events = await new EventReader(await fetch(`${url}/runs/run-wait/stream`, { headers: { 'last-event-id': interrupted.at(-1)?.id as string } })).rest();
    expect(events.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' }, result: { text: '5' } });
    // Once it has moved on, there is nothing to approve.
    await refused(await post(`${url}/runs/run-wait/approve`, {}), 409, /has ended/);
  });

  it('refuses an approval while the run is not waiting for a human', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const hold = defineTool({ name: 'hold', description: 'Waits', input: z.object({}), execute: async () => (started(), await held, 'held') });
    const agent = trackAgent({ model: scriptedModel([{ toolCalls: [{ name: 'hold', arguments: {} }] }, { text: 'done' }]), tools: [hold] });
    served = await serve(createAgUiHandler(agent));
    const reader = new EventReader(await post(served.url, runInput('Hold', 'run-busy')));
    await running;
    await refused(await post(`${served.url}/runs/run-busy/approve`, {}), 409, /not waiting for a human \(it is in act\)/);
    release();
    expect((await reader.rest()).at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', result: { text: 'done' } });
  });
});
