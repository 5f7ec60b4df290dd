/**
 * The AI SDK UI message stream through the web handler, over real HTTP on 127.0.0.1, read by
 * the AI SDK's own reader (`readUIMessageStream`): the reassembled message, a reconnect, the
 * approval round trip `useChat` makes, and bad requests.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { z } from 'zod';
import { RunCancelledError } from '../../src/agent/errors.ts';
import type { AgentRun } from '../../src/agent/types.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { createAiSdkHandler, type AiSdkChunk } from '../../src/web/aiSdk.ts';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import { stopTrackedAgents, trackAgent } from '../support/agents.ts';
import { chunksOf, add, post, serve, type Served } from './support.ts';

let served: Served | undefined;
afterEach(async () => {
  stopTrackedAgents();
  await served?.close();
  served = undefined;
});

// Every chunk the protocol sends is one the AI SDK's reader takes: the type check fails otherwise.
export const fitsTheAiSdk = (chunk: AiSdkChunk): UIMessageChunk => chunk;

/** What useChat's default transport posts: the chat id and every message so far. */
const chatBody = (messages: readonly UIMessage[]) => ({ id: 'chat-1', messages, trigger: 'submit-message', messageId: undefined });
const userMessage = (text: string, id = 'u1'): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] });
/** A 1×1 PNG's first bytes: enough for a media type to be told from them. */
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).toString('base64');


/** The assistant message `readUIMessageStream` builds from a response (continuing `message` if given). */
async function messageOf(response: Response, message?: UIMessage): Promise<UIMessage> {
  expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
  let last: UIMessage | undefined;
  for await (const built of readUIMessageStream({ stream: chunksOf(response.body as ReadableStream<Uint8Array>), terminateOnError: true, ...(message === undefined ? {} : { message: structuredClone(message) }) })) last = built;
  if (last === undefined) throw new Error('the stream built no message');
  return structuredClone(last);
}

const textOf = (message: UIMessage) => message.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('|');
const toolPart = (message: UIMessage) => message.parts.find((part) => part.type === 'tool-add');
const dataParts = (message: UIMessage, name: string) => message.parts.filter((part) => part.type === `data-actorloop.${name}`).map((part) => (part as { data: unknown }).data);

/** A text body as the stream a fetch response would give. */
const bodyOf = (text: string) => new Response(text, { headers: { 'x-vercel-ai-ui-message-stream': 'v1' } });

describe('a run read by readUIMessageStream', () => {
  it('reassembles the streamed text, the tool part with its input and output, the steps and the usage', async () => {
    const model = scriptedModel([{ text: 'Let me add.', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'The sum is 3.' }]);
    const agent = trackAgent({ model: { provider: model, stream: true }, tools: [add()] });
    const entries: JournalEntry[] = [];
    agent.events$.subscribe((entry) => entries.push(entry));
    served = await serve(createAiSdkHandler(agent));

    const message = await messageOf(await post(served.url, chatBody([userMessage('What is 1 + 2?')])));

    const terminated = entries.find((e) => e.event.type === 'run.terminated')?.event;
    const runId = entries[0]?.runId;
    expect(message.id).toBe(runId);
    expect(message.role).toBe('assistant');
    expect(textOf(message)).toBe('Let me add.|The sum is 3.');
    expect(toolPart(message)).toMatchObject({ type: 'tool-add', toolCallId: 'call_0_0', state: 'output-available', input: { a: 1, b: 2 }, output: '3' });
    // One step per model turn, the tool call inside the first.
    expect(message.parts.map((part) => part.type).filter((type) => !type.startsWith('data-'))).toEqual(['step-start', 'text', 'tool-add', 'step-start', 'text']);
    expect(dataParts(message, 'policy.evaluated')).toEqual([expect.objectContaining({ toolCallId: 'call_0_0', decision: 'allow' })]);
    // The phase is one part, updated in place; it ends in the last phase the run entered.
    expect(dataParts(message, 'phase.entered')).toEqual([{ type: 'phase.entered', phase: 'reason' }]);
    expect(message.metadata).toEqual({ runId, reason: 'final_answer', iterations: 2, usage: terminated?.type === 'run.terminated' ? terminated.usage : undefined });
  });

  it('gives the same message when the page reconnects with Last-Event-ID mid-text', async () => {
    const model = scriptedModel([{ text: 'Let me add these two.', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'The sum is three.' }]);
    const agent = trackAgent({ model: { provider: model, stream: true }, tools: [add()] });
    served = await serve(createAiSdkHandler(agent));
    const whole = await (await post(served.url, chatBody([userMessage('What is 1 + 2?')]))).text();
    const full = await messageOf(bodyOf(whole));

    const blocks = whole.split('\n\n').filter((block) => block !== '');
    // Cut after the first text delta, before its text part ends: the reconnect must finish that part and everything after it.
    const deltas = blocks.flatMap((block, index) => (block.includes('"type":"text-delta"') ? [index] : []));
    const cut = deltas[0] as number;
    expect(blocks[cut + 1]).toContain('"type":"text-end"');
    const lastId = /^id: (.+)$/m.exec(blocks[cut] as string)?.[1] as string;
    const rest = await fetch(`${served.url}/runs/${full.id}/stream`, { headers: { 'last-event-id': lastId } });
    const rejoined = `${blocks.slice(0, cut + 1).join('\n\n')}\n\n${await rest.text()}`;

    expect(await messageOf(bodyOf(rejoined))).toEqual(full);
    expect(textOf(full)).toBe('Let me add these two.|The sum is three.');
  });

  it('keeps a tool part per call when the model numbers its calls anew each turn (Kimi via vLLM: add:0 every turn)', async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: 'add:0', name: 'add', arguments: { a: 1, b: 2 } }] },
      { toolCalls: [{ id: 'add:0', name: 'add', arguments: { a: 3, b: 4 } }] },
      { text: 'Done.' },
    ]);
    const agent = trackAgent({ model: { provider: model, stream: true }, tools: [add()] });
    served = await serve(createAiSdkHandler(agent));

    const message = await messageOf(await post(served.url, chatBody([userMessage('Add twice')])));

    const calls = message.parts.filter((part) => part.type === 'tool-add') as { toolCallId: string; input: unknown; output: unknown }[];
    expect(calls.map(({ input, output }) => ({ input, output }))).toEqual([
      { input: { a: 1, b: 2 }, output: '3' },
      { input: { a: 3, b: 4 }, output: '7' },
    ]);
    expect(new Set(calls.map((call) => call.toolCallId)).size).toBe(2);
    // The model is sent back the id it gave, where no earlier call of the conversation has it.
    expect(model.calls[1]?.messages.find((m) => m.role === 'assistant')?.toolCalls?.[0]?.id).toBe('add:0');
  });

  it('ends a failed run with an error chunk carrying the code, after its usage', async () => {
    const model = scriptedModel([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }] }]);
    const agent = trackAgent({ model, tools: [add()], limits: { maxIterations: 1 } });
    served = await serve(createAiSdkHandler(agent));
    const text = await (await post(served.url, chatBody([userMessage('Loop')]))).text();
    const chunks = text
      .split('\n\n')
      .filter((block) => block !== '')
      .map((block) => JSON.parse(block.slice(block.indexOf('data: ') + 6)) as UIMessageChunk);
    expect(chunks.at(-2)).toMatchObject({ type: 'message-metadata', messageMetadata: { reason: 'max_iterations' } });
    expect(chunks.at(-1)).toMatchObject({ type: 'error', errorText: expect.stringContaining('max_iterations') });
    expect(chunks.filter((chunk) => chunk.type === 'finish')).toEqual([]);
  });
});

describe('what reaches the page', () => {
  it('redacts tool input and output with the default rules and the handler’s own', async () => {
    const echo = defineTool({ name: 'echo', description: 'Echoes', input: z.object({ key: z.string() }), execute: ({ key }) => `stored ${key} for tenant-acme-7` });
    const model = scriptedModel([{ toolCalls: [{ name: 'echo', arguments: { key: 'sk-live0123456789abcdef' } }] }, { text: 'Stored.' }]);
    const agent = trackAgent({ model, tools: [echo] });
    served = await serve(createAiSdkHandler(agent, { redact: { secrets: ['tenant-acme-7'] } }));
    const wire = await (await post(served.url, chatBody([userMessage('Store my key')]))).text();
    const message = await messageOf(bodyOf(wire));
    const part = message.parts.find((p) => p.type === 'tool-echo') as { input: { key: string }; output: string };
    expect(Object.keys(part.input)).toEqual(['key']);
    expect(part.output).toContain('stored');
    expect(wire).not.toContain('sk-live0123456789abcdef');
    expect(wire).not.toContain('tenant-acme-7');
  });

  it('ends a cancelled run with abort, after its usage', async () => {
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
    const agent = trackAgent({ model: scriptedModel([{ toolCalls: [{ name: 'slow', arguments: {} }] }]), tools: [slow] });
    const runs: AgentRun[] = [];
    served = await serve(createAiSdkHandler(agent, { onRun: (run) => runs.push(run) }));
    const response = await post(served.url, chatBody([userMessage('Wait')]));
    await running;
    expect((await post(`${served.url}/runs/${runs[0]?.runId}/cancel`, {})).status).toBe(202);
    const chunks = (await response.text())
      .split('\n\n')
      .filter((block) => block !== '')
      .map((block) => JSON.parse(block.slice(block.indexOf('data: ') + 6)) as UIMessageChunk);
    await expect(runs[0]?.result).rejects.toBeInstanceOf(RunCancelledError);
    expect(chunks.slice(-2)).toEqual([expect.objectContaining({ type: 'message-metadata', messageMetadata: expect.objectContaining({ reason: 'cancelled' }) }), { type: 'abort', reason: 'cancelled' }]);
  });
});

describe('tool approval, the way useChat answers it', () => {
  const confirming = (script: Parameters<typeof scriptedModel>[0]) => {
    const model = scriptedModel(script);
    return { model, agent: trackAgent({ model: { provider: model, stream: true }, tools: [add(true)] }) };
  };

  /** The message of the first response: it ends at the wait, the call asking for approval. */
  async function heldMessage(url: string): Promise<UIMessage> {
    const held = await messageOf(await post(url, chatBody([userMessage('Add 2 and 3')])));
    expect(toolPart(held)).toMatchObject({ state: 'approval-requested', input: { a: 2, b: 3 }, approval: { id: 'call_0_0' } });
    return held;
  }

  /** What `addToolApprovalResponse` does to the message before useChat sends it back. */
  function answered(message: UIMessage, approved: boolean, reason?: string): UIMessage {
    const parts = message.parts.map((part) =>
      part.type === 'tool-add' && part.state === 'approval-requested' ? { ...part, state: 'approval-responded' as const, approval: { id: part.approval.id, approved, ...(reason === undefined ? {} : { reason }) } } : part,
    );
    return { ...message, parts } as UIMessage;
  }

  it("serves the chat's active run at GET <chat id>/stream (useChat's resumeStream) from the start of its response; 204 when none is active", async () => {
    const { agent } = confirming([{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: 'It is 5.' }]);
    const runs: AgentRun[] = [];
    served = await serve(createAiSdkHandler(agent, { onRun: (run) => runs.push(run) }));
    const resumed = () => fetch(`${served?.url as string}/chat-1/stream`);
    expect((await resumed()).status).toBe(204);

    const held = await heldMessage(served.url);
    // The run waits for the page: its response is served again, up to the approval request.
    expect(await messageOf(await resumed())).toEqual(held);

    expect((await post(`${served.url}/runs/${held.id}/approve`, {})).status).toBe(202);
    expect((await runs[0]?.settled)?.text).toBe('It is 5.');
    expect((await resumed()).status).toBe(204);
  });

  it('ends the response at the wait; the answer in the next request approves the call and streams the run on', async () => {
    const { agent } = confirming([{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: 'It is 5.' }]);
    served = await serve(createAiSdkHandler(agent));
    const held = await heldMessage(served.url);

    const reply = answered(held, true);
    const done = await messageOf(await post(served.url, chatBody([userMessage('Add 2 and 3'), reply])), reply);

    expect(done.id).toBe(held.id);
    expect(toolPart(done)).toMatchObject({ state: 'output-available', input: { a: 2, b: 3 }, output: '5' });
    expect(textOf(done)).toBe('It is 5.');
    expect(dataParts(done, 'human.decided')).toEqual([{ type: 'human.decided', decision: 'approve', toolCallIds: ['call_0_0'] }]);
    expect(done.metadata).toMatchObject({ reason: 'final_answer' });
    // The answered run takes no second answer.
    const again = await post(served.url, chatBody([userMessage('Add 2 and 3'), reply]));
    expect(again.status).toBe(409);
  });

  it('sends a denial’s reason to the model, and shows the call as denied', async () => {
    const { agent, model } = confirming([{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: 'Understood.' }]);
    served = await serve(createAiSdkHandler(agent));
    const held = await heldMessage(served.url);

    const reply = answered(held, false, 'not with my numbers');
    const done = await messageOf(await post(served.url, chatBody([userMessage('Add 2 and 3'), reply])), reply);

    expect(model.calls[1]?.messages.find((m) => m.role === 'tool')?.content).toContain('not with my numbers');
    expect(toolPart(done)).toMatchObject({ state: 'output-denied', approval: { approved: false, reason: 'not with my numbers' } });
    expect(textOf(done)).toBe('Understood.');
  });
});

describe('chat requests it cannot use', () => {
  async function refused(response: Response, status: number, says: RegExp): Promise<void> {
    expect(response.status).toBe(status);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('web_request');
    expect(body.error.message).toMatch(says);
  }

  it('refuses a body that is no chat request, a last message with no task, and an answer to no approval', async () => {
    const model = scriptedModel([{ text: 'never' }]);
    const agent = trackAgent({ model });
    served = await serve(createAiSdkHandler(agent));
    await refused(await post(served.url, { messages: [] }), 400, /chat request .*: id/);
    await refused(await post(served.url, chatBody([{ id: 'u', role: 'user', parts: [{ type: 'text', text: ' ' }] }])), 400, /user message with text or files/);
    await refused(await post(served.url, chatBody([userMessage('hi'), { id: 'a', role: 'assistant', parts: [{ type: 'text', text: 'hello' }] }])), 400, /no answered tool approval/);
    const answer: UIMessage = { id: 'run-unknown', role: 'assistant', parts: [{ type: 'tool-add', toolCallId: 'c', state: 'approval-responded', input: {}, approval: { id: 'c', approved: true } }] };
    await refused(await post(served.url, chatBody([userMessage('hi'), answer])), 404, /No run run-unknown/);
    expect(model.calls).toHaveLength(0);
  });

  it('refuses, in one line saying what to send, a file the model cannot be given, wherever it is in the chat, and starts nothing', async () => {
    const model = scriptedModel([{ text: 'never' }]);
    served = await serve(createAiSdkHandler(trackAgent({ model: { provider: model, vision: true } })));
    const asking = (part: Record<string, unknown>): UIMessage => ({ id: 'u', role: 'user', parts: [{ type: 'text', text: 'What is in it?' }, part as UIMessage['parts'][number]] });
    await refused(await post(served.url, chatBody([asking({ type: 'file', mediaType: 'application/pdf', url: 'https://example.com/report.pdf' })])), 400, /^Message 1, part 2 is a file \(application\/pdf\) at "https:\/\/example.com\/report.pdf": .*send it as a data: URL/);
    await refused(await post(served.url, chatBody([asking({ type: 'file', mediaType: 'image/png', url: 'blob:http://localhost/1' }), userMessage('hi', 'u2')])), 400, /^Message 1, part 2 is an image at "blob:.*data: URL/);
    await refused(await post(served.url, chatBody([asking({ type: 'file', mediaType: 'image/png' })])), 400, /^Message 1, part 2 is not a file part .*url/);
    const withFile: UIMessage = { id: 'a', role: 'assistant', parts: [{ type: 'text', text: 'Here.' }, { type: 'file', mediaType: 'image/png', url: `data:image/png;base64,${PNG}` }] };
    await refused(await post(served.url, chatBody([userMessage('Draw'), withFile, userMessage('Again', 'u2')])), 400, /^Message 2 \(assistant\), part 2 is a file/);
    // A file of a type the chat formats do not take, and an image for a model not declared to see.
    await refused(await post(served.url, chatBody([asking({ type: 'file', mediaType: 'application/zip', url: 'data:application/zip;base64,UEsDBA==' })])), 400, /application\/zip.*take application\/pdf/);
    const blind = await serve(createAiSdkHandler(trackAgent({ model })));
    try {
      await refused(await post(blind.url, chatBody([asking({ type: 'file', mediaType: 'image/png', url: `data:image/png;base64,${PNG}` })])), 400, /not declared to take images.*vision: true/);
    } finally {
      await blind.close();
    }
    expect(model.calls).toHaveLength(0);
  });

  it("gives the model the chat's images and files, by URL or as data: URLs, in their place among the text", async () => {
    const model = scriptedModel([{ text: 'A dog, a square and a report.' }]);
    served = await serve(createAiSdkHandler(trackAgent({ model: { provider: model, vision: true } })));
    const pdf = Buffer.from('%PDF-1.4 a report').toString('base64');
    const earlier: UIMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'My dog:' }, { type: 'file', mediaType: 'image/jpeg', url: 'https://example.com/dog.jpg' }] };
    const reply: UIMessage = { id: 'a1', role: 'assistant', parts: [{ type: 'step-start' }, { type: 'text', text: 'A fine dog.' }] };
    const last: UIMessage = {
      id: 'u2',
      role: 'user',
      parts: [
        { type: 'file', mediaType: 'image/png', url: `data:image/png;base64,${PNG}` },
        { type: 'text', text: 'What are these?' },
        { type: 'file', mediaType: 'application/pdf', filename: 'report.pdf', url: `data:application/pdf;base64,${pdf}` },
      ],
    };
    const message = await messageOf(await post(served.url, chatBody([earlier, reply, last])));
    expect(textOf(message)).toBe('A dog, a square and a report.');
    const sent = (model.calls[0]?.messages ?? []).filter((m) => m.role !== 'system');
    expect(sent).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'My dog:' }, { type: 'image', url: 'https://example.com/dog.jpg', mediaType: 'image/jpeg' }] },
      { role: 'assistant', content: 'A fine dog.' },
      {
        role: 'user',
        content: [
          { type: 'image', data: PNG, mediaType: 'image/png' },
          { type: 'text', text: 'What are these?' },
          { type: 'file', data: pdf, mediaType: 'application/pdf', filename: 'report.pdf' },
        ],
      },
    ]);
  });

  it("gives the model a multi-step answer sent back as history as the run had it: each turn's reply and calls, then their results", async () => {
    const model = scriptedModel([
      { text: 'Let me add.', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
      { text: 'Now double it.', toolCalls: [{ name: 'add', arguments: { a: 3, b: 3 } }] },
      { text: 'The answer is 6.' },
      { text: 'Still 6.' },
    ]);
    const agent = trackAgent({ model: { provider: model, stream: true }, tools: [add()] });
    served = await serve(createAiSdkHandler(agent));
    const question = userMessage('What is (1 + 2) * 2?');
    const answer = await messageOf(await post(served.url, chatBody([question])));
    expect(answer.parts.filter((part) => part.type === 'step-start')).toHaveLength(3);
    const again = await messageOf(await post(served.url, chatBody([question, answer, userMessage('And now?', 'u2')])));
    expect(textOf(again)).toBe('Still 6.');
    // The conversation the run's last turn was sent, and its answer, is the history the next run's model gets.
    const ran = [...(model.calls[2]?.messages ?? []), { role: 'assistant', content: 'The answer is 6.' }];
    const sent = model.calls[3]?.messages ?? [];
    expect(sent.slice(0, -1)).toEqual(ran);
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'user']);
  });

  it('takes the earlier messages, tool calls and results included, as the history', async () => {
    const model = scriptedModel([{ text: 'Still 3.' }]);
    const agent = trackAgent({ model, tools: [add()] });
    served = await serve(createAiSdkHandler(agent));
    const earlier: UIMessage = {
      id: 'a1',
      role: 'assistant',
      parts: [{ type: 'text', text: 'Adding.' }, { type: 'tool-add', toolCallId: 'call_x', state: 'output-available', input: { a: 1, b: 2 }, output: '3' }],
    };
    const message = await messageOf(await post(served.url, chatBody([userMessage('What is 1 + 2?'), earlier, userMessage('And now?', 'u2')])));
    expect(textOf(message)).toBe('Still 3.');
    const sent = model.calls[0]?.messages ?? [];
    expect(sent.map((m) => m.role).slice(-4)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(sent.at(-3)).toMatchObject({ role: 'assistant', content: 'Adding.', toolCalls: [{ id: 'call_x', name: 'add', arguments: '{"a":1,"b":2}' }] });
    expect(sent.at(-2)).toMatchObject({ role: 'tool', toolCallId: 'call_x', content: '3' });
  });
});
