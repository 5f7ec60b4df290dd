/**
 * Gemini 3 through its OpenAI-compatible endpoint signs each tool call (`extra_content.google.thought_signature`
 * on the call) and answers 400 to a next request whose call comes back without it. Shapes as reported in
 * tinyhumansai/openhuman#3548 and Gitlawb/openclaude#76; served over HTTP to the real `openai` client.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, type Agent } from '../../src/agent/createAgent.ts';
import { assertValidConversation } from '../../src/conversation/validate.ts';
import { openAICompatible } from '../../src/inference/openaiCompatible.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { completionBody, reply, sseBytes, useOpenAIServer, type RecordedRequest, type ScriptedReply } from '../support/openaiServer.ts';

const server = useOpenAIServer();
const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
});

const SIGNED = { google: { thought_signature: 'Eo4GCosGAb4+9vtN' } };
const MISSING = [{ error: { code: 400, message: 'Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance.', status: 'INVALID_ARGUMENT' } }];

const signedCall = { id: 'FL1tqiJ9', type: 'function', extra_content: SIGNED, function: { name: 'lookup', arguments: '{"city":"Paris"}' } };

/** Gemini's rule: every call in the history comes back with the signature it was given. */
function enforceSignature(next: ScriptedReply): ScriptedReply {
  return {
    kind: 'custom',
    respond(request: RecordedRequest): ScriptedReply {
      const messages = (request.body as { messages: { role: string; tool_calls?: { extra_content?: unknown }[] }[] }).messages;
      const calls = messages.flatMap((message) => message.tool_calls ?? []);
      return calls.every((call) => JSON.stringify(call.extra_content) === JSON.stringify(SIGNED)) ? next : reply.json(MISSING, 400);
    },
  };
}

function agentFor(stream: boolean) {
  const lookup = defineTool({ name: 'lookup', description: 'Weather of a city', input: z.object({ city: z.string() }), execute: () => 'sunny' });
  const provider = openAICompatible({ baseURL: server().baseURL, apiKey: 'test', model: 'gemini-3-flash-preview', env: {}, timeoutMs: 10_000, retry: { maxRetries: 0 } });
  const agent = createAgent({ model: { provider, stream }, tools: [lookup] });
  agents.push(agent);
  return agent;
}

describe('a signed tool call (Gemini 3 through the OpenAI-compatible API)', () => {
  it('goes back with its extra_content, so the next request is accepted', async () => {
    const first = completionBody();
    server().enqueue(
      reply.json({ ...first, choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [signedCall] }, finish_reason: 'tool_calls' }] }),
      enforceSignature(reply.completion({ textPieces: ['Sunny in Paris.'] })),
    );
    const result = await agentFor(false).run('Weather in Paris?');
    expect(result.text).toBe('Sunny in Paris.');
    // The conversation keeps it, through the message schema too (what a journal and a resume read).
    const assistant = assertValidConversation(result.messages).find((message) => message.role === 'assistant' && message.toolCalls !== undefined);
    expect(assistant).toMatchObject({ toolCalls: [{ id: 'FL1tqiJ9', extraContent: JSON.stringify(SIGNED) }] });
  });

  it('goes back with its extra_content when the call was streamed without an index', async () => {
    // Gemini streams a call in one delta, with no index.
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'gemini-3-flash-preview', choices: [{ index: 0, delta, finish_reason: finish }] });
    server().enqueue(
      { kind: 'sse', pieces: [sseBytes([chunk({ role: 'assistant', tool_calls: [signedCall] }), chunk({}, 'tool_calls')])] },
      enforceSignature(reply.stream({ textPieces: ['Sunny ', 'in Paris.'] })),
    );
    const result = await agentFor(true).run('Weather in Paris?');
    expect(result.text).toBe('Sunny in Paris.');
    expect(server().requests).toHaveLength(2);
  });
});
