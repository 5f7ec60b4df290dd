/**
 * An image an MCP tool returns (server-everything's `get-tiny-image`, over stdio) reaches a
 * model that takes images as an image: over HTTP with the real `openai` client, the tool message
 * keeps its text description and a user message with the image follows the turn's tool results
 * (chat tool messages carry text only). A model without vision still gets the description only.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../src/agent/createAgent.ts';
import { openAICompatible } from '../../src/inference/openaiCompatible.ts';
import { reply, useOpenAIServer } from '../support/openaiServer.ts';
import { everythingStdio } from './support.ts';

const openai = useOpenAIServer();
const agents: Agent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.close();
});

interface Body {
  messages: { role: string; content: unknown; tool_call_id?: string }[];
}

function agentWith(vision: boolean): Agent {
  const provider = openAICompatible({ baseURL: openai().baseURL, apiKey: 'test', model: 'gpt-4o-mini', env: {}, timeoutMs: 10_000, retry: { maxRetries: 0 } });
  const agent = createAgent({ model: { provider, vision }, mcpServers: [everythingStdio] });
  agents.push(agent);
  return agent;
}

const script = () => {
  openai().enqueue(reply.completion({ toolCalls: [{ id: 'call_img', name: 'everything_get-tiny-image', argumentPieces: ['{}'] }] }), reply.completion({ textPieces: ['A tiny image.'] }));
};

describe('an MCP image result', () => {
  it('reaches a vision model as an image part after the tool results', async () => {
    script();
    const result = await agentWith(true).run('Show me the tiny image');
    expect(result.text).toBe('A tiny image.');
    const messages = (openai().requests[1]?.body as Body).messages;
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(String(messages[2]?.content)).toMatch(/\[image: image\/png, \d+(\.\d)? (B|KB)\]/);
    const images = messages[3]?.content as { type: string; text?: string; image_url?: { url: string } }[];
    expect(images[0]).toEqual({ type: 'text', text: 'Images returned by the tool everything_get-tiny-image (call call_img):' });
    expect(images[1]?.type).toBe('image_url');
    expect(images[1]?.image_url?.url).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/]{100,}={0,2}$/);
    // The run's conversation holds the image by reference, not inline.
    expect(JSON.stringify(result.messages)).not.toMatch(/[A-Za-z0-9+/]{200,}/);
  }, 30_000);

  it('stays a text description for a model without vision', async () => {
    script();
    await agentWith(false).run('Show me the tiny image');
    const messages = (openai().requests[1]?.body as Body).messages;
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(JSON.stringify(messages)).not.toMatch(/[A-Za-z0-9+/]{200,}/);
  }, 30_000);
});
