/**
 * Qwen 3.5+ chat templates raise on a system message that is not the first one, and the servers
 * that render them pass the error on (llama-server and MLX with a 400, Ollama with a 500). The
 * replay server enforces that rule with each server's recorded answer (test/fixtures/wire).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/index.ts';
import type { Message } from '../../src/core/messages.ts';
import { InferenceError } from '../../src/inference/errors.ts';
import { openAICompatible } from '../../src/inference/openaiCompatible.ts';
import type { OpenAICompatibleOptions } from '../../src/inference/config.ts';
import { startReplayServer, type ReplayServer, type RequestBody } from '../support/replayServer.ts';

let server: ReplayServer;
let refusal: string;
beforeEach(async () => {
  refusal = 'llamacpp-system-not-first.json';
  server = await startReplayServer({ rule: (body) => (systemNotFirst(body) ? refusal : undefined) });
});
afterEach(() => server.close());

const systemNotFirst = (body: RequestBody): boolean => body.messages.some((message, index) => message['role'] === 'system' && index > 0);
const roles = (body: RequestBody | undefined): unknown[] => (body?.messages ?? []).map((message) => message['role']);

/** A session's history after compaction: the summary is a system message after the first turn. */
const conversation: Message[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Plan the trip.' },
  { role: 'assistant', content: 'Booked the train.' },
  { role: 'system', content: 'Summary of earlier turns: the user travels on Friday.' },
  { role: 'user', content: 'And the hotel?' },
];

function provider(options: OpenAICompatibleOptions = {}) {
  return openAICompatible({ baseURL: server.baseURL, apiKey: 'sk-test-replay-key', model: 'qwen3.6-27b', env: {}, timeoutMs: 10_000, ...options });
}

describe('a chat template that takes one system message, first', () => {
  it.each([
    ['llama-server (400)', 'llamacpp-system-not-first.json'],
    ['Ollama (500)', 'ollama-system-not-first.json'],
    ['MLX (400)', 'mlx-system-not-first.json'],
  ])('is answered by sending the system messages joined at the start, once refused by %s', async (_server, fixture) => {
    refusal = fixture;
    server.enqueue('openai-chat-text.json');
    const reply = await provider().complete({ messages: conversation });
    expect(reply.text).toContain('Galaxy Day');
    expect(server.served).toEqual([fixture, 'openai-chat-text.json']);
    const sent = server.requests[1];
    expect(roles(sent)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(sent?.messages[0]?.['content']).toBe('You are terse.\n\nSummary of earlier turns: the user travels on Friday.');
    expect(sent?.messages.slice(1).map((message) => message['content'])).toEqual(['Plan the trip.', 'Booked the train.', 'And the hotel?']);
  });

  it('joins them at once for that model after the first refusal, streamed or not', async () => {
    const model = provider();
    server.enqueue('openai-chat-text.json', 'openai-chat-text-stream.sse');
    await model.complete({ messages: conversation });
    const events = [];
    for await (const event of model.stream({ messages: conversation })) events.push(event);
    expect(events.at(-1)?.type).toBe('done');
    // One refusal in all: the stream's request went out joined.
    expect(server.served).toEqual(['llamacpp-system-not-first.json', 'openai-chat-text.json', 'openai-chat-text-stream.sse']);
    expect(roles(server.requests[2])).toEqual(['system', 'user', 'assistant', 'user']);
  });

  it("joins them from the first request when the model's capabilities say so", async () => {
    server.enqueue('openai-chat-text.json');
    await provider({ models: { 'qwen3.6*': { systemMessages: 'first' } } }).complete({ messages: conversation });
    expect(server.served).toEqual(['openai-chat-text.json']);
  });

  it('leaves a conversation with one leading system message as it is', async () => {
    server.enqueue('openai-chat-text.json');
    await provider({ models: { 'qwen3.6*': { systemMessages: 'first' } } }).complete({ messages: conversation.slice(0, 3) });
    expect(roles(server.requests[0])).toEqual(['system', 'user', 'assistant']);
  });

  it("is a typed error that says what to declare, never retried (even Ollama's 500), when the capabilities say `anywhere`", async () => {
    refusal = 'ollama-system-not-first.json';
    const error: unknown = await provider({ models: { 'qwen3.6*': { systemMessages: 'anywhere' } } })
      .complete({ messages: conversation })
      .then(() => 'answered', (failure: unknown) => failure);
    expect(error).toBeInstanceOf(InferenceError);
    expect((error as InferenceError).code).toBe('system_message_refused');
    expect((error as InferenceError).retryable).toBe(false);
    expect((error as InferenceError).message).toContain('System message must be at the beginning');
    expect((error as InferenceError).message).toContain("systemMessages: 'first'");
    expect(server.requests).toHaveLength(1);
  });

  it('runs an agent whose history holds a summary after the first turn', async () => {
    const agent = createAgent({ id: 'qwen-agent', model: { provider: provider() }, system: 'You are terse.' });
    try {
      server.enqueue('openai-chat-text.json', 'openai-chat-text.json');
      const history = conversation.slice(1, 4);
      const first = await agent.run('And the hotel?', { history });
      expect(first.status).toBe('done');
      const second = await agent.run('And the hotel?', { history });
      expect(second.status).toBe('done');
      // Refused once; the retry and the next run went out joined.
      expect(server.served).toEqual(['llamacpp-system-not-first.json', 'openai-chat-text.json', 'openai-chat-text.json']);
      for (const sent of server.requests.slice(1)) expect(sent.messages.filter((message) => message['role'] === 'system')).toHaveLength(1);
    } finally {
      agent.stop();
    }
  });
});
