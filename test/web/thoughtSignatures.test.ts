/**
 * A chat with Gemini 3 through a page: the model signs each tool call (`extra_content` on the call) and
 * refuses a later request whose call comes back without its signature. The page's next turn sends the
 * conversation back, so the signature must reach the page with the call and come back in its history:
 * AG-UI through `@ag-ui/client`'s HttpAgent, the AI SDK through its own reader, the model the real
 * `openai` client against a local server on 127.0.0.1.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HttpAgent } from '@ag-ui/client';
import type { Message as AgUiMessage } from '@ag-ui/core';
import type { UIMessage } from 'ai';
import { z } from 'zod';
import { openAICompatible } from '../../src/inference/openaiCompatible.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { createAgUiHandler } from '../../src/web/agUi.ts';
import { createAiSdkHandler } from '../../src/web/aiSdk.ts';
import { stopTrackedAgents, trackAgent } from '../support/agents.ts';
import { completionBody, reply, useOpenAIServer, type RecordedRequest, type ScriptedReply } from '../support/openaiServer.ts';
import { chatBody, messageOf, partsOf, post, serve, type Served } from './support.ts';

const server = useOpenAIServer();
let served: Served | undefined;
afterEach(async () => {
  stopTrackedAgents();
  await served?.close();
  served = undefined;
});

const SIGNED = { google: { thought_signature: 'Eo4GCosGAb4+9vtN' } };
const MISSING = [{ error: { code: 400, message: 'Function call is missing a thought_signature in functionCall parts.', status: 'INVALID_ARGUMENT' } }];
const signedCall = { id: 'FL1tqiJ9', type: 'function', extra_content: SIGNED, function: { name: 'lookup', arguments: '{"city":"Paris"}' } };
const callReply = (): ScriptedReply => {
  const body = completionBody();
  return reply.json({ ...body, choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [signedCall] }, finish_reason: 'tool_calls' }] });
};

type SentMessage = { role: string; tool_calls?: { id: string; extra_content?: unknown }[] };
const sentMessages = (request: RecordedRequest | undefined) => (request?.body as { messages: SentMessage[] }).messages;

/** Gemini's rule: every call in the history comes back with the signature it was given. */
function enforceSignature(next: ScriptedReply): ScriptedReply {
  return {
    kind: 'custom',
    respond(request) {
      const calls = sentMessages(request).flatMap((message) => message.tool_calls ?? []);
      return calls.every((call) => JSON.stringify(call.extra_content) === JSON.stringify(SIGNED)) ? next : reply.json(MISSING, 400);
    },
  };
}

function geminiAgent() {
  const lookup = defineTool({ name: 'lookup', description: 'Weather of a city', input: z.object({ city: z.string() }), execute: () => 'sunny' });
  const provider = openAICompatible({ baseURL: server().baseURL, apiKey: 'test', model: 'gemini-3-flash-preview', env: {}, timeoutMs: 10_000, retry: { maxRetries: 0 } });
  return trackAgent({ model: { provider, stream: false }, tools: [lookup] });
}

/** The second turn's request carries the first turn's call, signed. */
function expectSignedHistory(): void {
  const last = server().requests.at(-1);
  const assistant = sentMessages(last).find((message) => message.tool_calls !== undefined);
  expect(assistant?.tool_calls).toEqual([expect.objectContaining({ id: 'FL1tqiJ9', extra_content: SIGNED })]);
}

describe('a signed tool call in a chat served to a page', () => {
  it('AG-UI: reaches the page on its tool call (encryptedValue) and goes back to the model on the next turn', async () => {
    server().enqueue(callReply(), enforceSignature(reply.completion({ textPieces: ['Sunny in Paris.'] })), enforceSignature(reply.completion({ textPieces: ['Rome too.'] })));
    served = await serve(createAgUiHandler(geminiAgent()));
    const question: AgUiMessage = { id: 'u1', role: 'user', content: 'Weather in Paris?' };
    const client = new HttpAgent({ url: served.url, threadId: 'thread-signed', initialMessages: [question] });

    await client.runAgent({ runId: 'run-signed-1' });
    const call = client.messages.flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []) : []))[0];
    expect(call).toMatchObject({ id: 'FL1tqiJ9', encryptedValue: JSON.stringify(SIGNED) });

    client.addMessage({ id: 'u2', role: 'user', content: 'And Rome?' });
    await client.runAgent({ runId: 'run-signed-2' });
    expect(client.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Rome too.' });
    expect(server().requests).toHaveLength(3);
    expectSignedHistory();
  });

  it('AI SDK: reaches the page as the tool part’s callProviderMetadata and goes back to the model on the next turn', async () => {
    server().enqueue(callReply(), enforceSignature(reply.completion({ textPieces: ['Sunny in Paris.'] })), enforceSignature(reply.completion({ textPieces: ['Rome too.'] })));
    served = await serve(createAiSdkHandler(geminiAgent()));
    const question: UIMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Weather in Paris?' }] };

    const answer = await messageOf(await post(served.url, chatBody([question])));
    expect(partsOf(answer).find((part) => part.type === 'tool-lookup')).toMatchObject({ toolCallId: 'FL1tqiJ9', state: 'output-available', callProviderMetadata: { actorloop: { extraContent: JSON.stringify(SIGNED) } } });

    const next: UIMessage = { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'And Rome?' }] };
    const again = await messageOf(await post(served.url, chatBody([question, answer, next])));
    expect(partsOf(again).filter((part) => part.type === 'text').map((part) => part.text)).toEqual(['Rome too.']);
    expect(server().requests).toHaveLength(3);
    expectSignedHistory();
  });

  it('refuses, with a 400 saying what to send, a signature that is not the JSON of an object', async () => {
    served = await serve(createAgUiHandler(geminiAgent()));
    const history = [
      { id: 'a1', role: 'assistant', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' }, encryptedValue: 'not json' }] },
      { id: 't1', role: 'tool', toolCallId: 'c1', content: 'sunny' },
      { id: 'u2', role: 'user', content: 'And Rome?' },
    ];
    const agUi = await post(served.url, { threadId: 't', runId: 'r', messages: history, tools: [], context: [], state: {}, forwardedProps: {} });
    expect(agUi.status).toBe(400);
    expect(await agUi.text()).toMatch(/encryptedValue.*as the stream gave it/);
    await served.close();

    served = await serve(createAiSdkHandler(geminiAgent()));
    const part = { type: 'tool-lookup', toolCallId: 'c1', state: 'output-available', input: {}, output: 'sunny', callProviderMetadata: { actorloop: { extraContent: '[1]' } } };
    const aiSdk = await post(served.url, chatBody([{ id: 'a1', role: 'assistant', parts: [part] } as unknown as UIMessage, { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'And Rome?' }] }]));
    expect(aiSdk.status).toBe(400);
    expect(await aiSdk.text()).toMatch(/extraContent.*as the stream gave it/);
    expect(server().requests).toHaveLength(0);
  });
});
