/**
 * The Anthropic provider against recorded Anthropic traffic (test/fixtures/wire/anthropic, each
 * file's origin in its `.origin.json`), served on 127.0.0.1 to the real `@anthropic-ai/sdk`
 * client. Each test asserts what a user of the provider sees.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Message } from '../../src/core/messages.ts';
import type { StreamEvent } from '../../src/core/provider.ts';
import { anthropic } from '../../src/inference/anthropic.ts';
import { ANTHROPIC_BASE_URL, type AnthropicOptions } from '../../src/inference/anthropicConfig.ts';
import { AuthenticationError, ContextLengthError, RateLimitError, StructuredOutputError, costOf } from '../../src/inference/index.ts';
import type { RetryInfo } from '../../src/inference/index.ts';
import { wireJson, wireReply } from '../support/anthropicWire.ts';
import { startOpenAIServer } from '../support/openaiServer.ts';
import type { OpenAIServer, ScriptedReply } from '../support/openaiServer.ts';
import { InferenceError } from '../../src/inference/errors.ts';
import type { ConfigurationError } from '../../src/core/errors.ts';

const CANARY = 'sk-ant-canary-7f3a9c1e5b2d4f60aa';
let server: OpenAIServer;

beforeAll(async () => {
  server = await startOpenAIServer();
});
afterAll(() => server.close());
beforeEach(() => server.reset());

function provider(options: Partial<AnthropicOptions> = {}) {
  return anthropic({
    baseURL: server.baseURL.replace(/\/v1$/, ''),
    apiKey: CANARY,
    env: {},
    timeoutMs: 5_000,
    retry: { baseDelayMs: 1, maxDelayMs: 4, jitter: 0 },
    ...options,
  });
}

const ask = (content = 'hi'): Message[] => [{ role: 'user', content }];
const bodyOf = (index: number) => server.requests[index]?.body as Record<string, unknown>;
const textOf = (name: string, index = 0) => ((wireJson(name)['content'] as { type: string; text?: string }[]).filter((b) => b.type === 'text')[index]?.text ?? '');

async function collect(events: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

const TOOLS = [
  { name: 'lookup', description: 'Look a thing up', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } },
  { name: 'retrieve_entity_info', description: 'Get the knowledge about the given entity.', parameters: { type: 'object', properties: { name: { type: 'string' } } } },
];

describe('anthropic complete, recorded replies', () => {
  it('returns the text of a reply and prices its cache reads and writes apart', async () => {
    server.enqueue(wireReply('text-cache-usage'));
    // Anthropic's own endpoint (list prices apply), its requests carried to the local server.
    const redirect: typeof fetch = (input, init) => fetch((input instanceof Request ? input.url : String(input)).replace(ANTHROPIC_BASE_URL, server.baseURL.replace(/\/v1$/, '')), init);
    const official = provider({ baseURL: ANTHROPIC_BASE_URL, fetch: redirect });
    const completion = await official.complete({ messages: [{ role: 'system', content: 'Be brief.' }, ...ask('Summarise Python')] });
    expect(completion.text).toBe(textOf('text-cache-usage'));
    expect(completion.finishReason).toBe('stop');
    expect(completion.model).toBe('claude-sonnet-4-5-20250929');
    // input 3 + cache write 418 + cache read 1111; output 33.
    expect(completion.usage).toEqual({ promptTokens: 1532, completionTokens: 33, totalTokens: 1565, cacheReadTokens: 1111, cacheWriteTokens: 418 });
    const expected = (3 * 3 + 1111 * 0.3 + 418 * 3.75 + 33 * 15) / 1_000_000;
    expect(completion.costUsd).toBeCloseTo(expected, 12);
    // Billing every input token at the full price would cost more: the cache discount is applied.
    expect(completion.costUsd).toBeLessThan((1532 * 3 + 33 * 15) / 1_000_000);
  });

  it('gives no cost behind a gateway baseURL unless the user prices the model', async () => {
    server.enqueue(wireReply('text-cache-usage'));
    const unpriced = await provider().complete({ messages: ask('Summarise Python') });
    expect(unpriced.usage.totalTokens).toBe(1565);
    expect(unpriced).not.toHaveProperty('costUsd');
    server.enqueue(wireReply('text-cache-usage'));
    const priced = await provider({ prices: { 'claude-sonnet-4-5': { promptPerMillion: 1_000_000, completionPerMillion: 0 } } }).complete({ messages: ask('Summarise Python') });
    expect(priced.costUsd).toBe(1532);
  });

  it('marks the system prompt and the last tool as a cache breakpoint by default, and sends none when caching is off', async () => {
    server.enqueue(wireReply('text-cache-usage'), wireReply('text-cache-usage'));
    const messages: Message[] = [{ role: 'system', content: 'Be brief.' }, ...ask()];
    await provider().complete({ messages, tools: TOOLS, maxTokens: 100 });
    const cached = bodyOf(0);
    expect(cached['system']).toEqual([{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }]);
    const tools = cached['tools'] as Record<string, unknown>[];
    expect(tools.map((tool) => tool['cache_control'])).toEqual([undefined, { type: 'ephemeral' }]);
    expect(tools[0]).toEqual({ name: 'lookup', description: 'Look a thing up', input_schema: TOOLS[0]?.parameters });
    expect(cached['max_tokens']).toBe(100);

    await provider({ promptCaching: false }).complete({ messages, tools: TOOLS });
    expect(JSON.stringify(bodyOf(1))).not.toContain('cache_control');
    expect(bodyOf(1)['max_tokens']).toBe(4096);
  });

  it('returns parallel tool calls with their ids and JSON arguments, and sends the results back as one user turn', async () => {
    server.enqueue(wireReply('parallel-tool-use'), wireReply('parallel-tool-use.final'));
    const model = provider();
    const first = await model.complete({ messages: ask('Alice, Bob, Charlie and Daisy are a family. Who is the youngest?'), tools: TOOLS });
    expect(first.finishReason).toBe('tool_calls');
    expect(first.text).toBe(textOf('parallel-tool-use'));
    expect(first.toolCalls.map((call) => [call.id, call.name, JSON.parse(call.arguments)])).toEqual([
      ['toolu_0167cfEnoQaPviGdVXA95zcu', 'retrieve_entity_info', { name: 'Alice' }],
      ['toolu_01EEe2V5HD1Ac4rKiUR4HD2T', 'retrieve_entity_info', { name: 'Bob' }],
      ['toolu_01XFyAjstT3966qvRynZyVPo', 'retrieve_entity_info', { name: 'Charlie' }],
      ['toolu_013mnQZbgtK2oe3Mo3XKJsx3', 'retrieve_entity_info', { name: 'Daisy' }],
    ]);
    const results: Message[] = first.toolCalls.map((call) => ({ role: 'tool', toolCallId: call.id, content: `${JSON.parse(call.arguments).name} is here` }));
    const final = await model.complete({
      messages: [...ask('Who is the youngest?'), { role: 'assistant', content: first.text, toolCalls: [...first.toolCalls] }, ...results],
      tools: TOOLS,
    });
    expect(final.text).toBe(textOf('parallel-tool-use.final'));
    const sent = bodyOf(1)['messages'] as { role: string; content: { type: string; tool_use_id?: string }[] }[];
    expect(sent.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(sent[2]?.content.map((block) => block.tool_use_id)).toEqual(first.toolCalls.map((call) => call.id));
  });

  it('keeps thinking as signed reasoning, out of the text, and sends it back first and unchanged with the tool result', async () => {
    server.enqueue(wireReply('thinking-tool-use.1'), wireReply('thinking-tool-use.2'));
    const model = provider({ thinking: { budgetTokens: 3000 } });
    const recorded = (wireJson('thinking-tool-use.1')['content'] as Record<string, string>[])[0] as Record<string, string>;
    const first = await model.complete({ messages: ask('What is the largest city in the user country?'), tools: TOOLS });
    expect(bodyOf(0)['thinking']).toEqual({ type: 'enabled', budget_tokens: 3000 });
    expect(bodyOf(0)['max_tokens']).toBe(3000 + 4096);
    expect(first.reasoning).toEqual([{ type: 'thinking', text: recorded['thinking'], signature: recorded['signature'] }]);
    expect(first.text).toBe(textOf('thinking-tool-use.1'));
    expect(first.text).not.toContain(recorded['thinking']?.slice(0, 40));
    expect(first.toolCalls).toEqual([{ id: 'toolu_01YGzqpRE16Vricda3Aqcejo', name: 'get_user_country', arguments: '{}' }]);

    const assistant: Message = { role: 'assistant', content: first.text, toolCalls: [...first.toolCalls], reasoning: [...(first.reasoning ?? [])] };
    await model.complete({ messages: [...ask('What is the largest city in the user country?'), assistant, { role: 'tool', toolCallId: 'toolu_01YGzqpRE16Vricda3Aqcejo', content: 'Mexico' }] });
    const sentAssistant = (bodyOf(1)['messages'] as { role: string; content: Record<string, unknown>[] }[])[1];
    expect(sentAssistant?.content[0]).toEqual({ type: 'thinking', thinking: recorded['thinking'], signature: recorded['signature'] });
    expect(sentAssistant?.content.map((block) => block['type'])).toEqual(['thinking', 'text', 'tool_use']);
  });

  it('does not force a tool while thinking, which Anthropic refuses: the choice becomes auto', async () => {
    // Anthropic's rule: thinking with a forced tool_choice is a 400.
    const rule = (next: ScriptedReply): ScriptedReply => ({
      kind: 'custom',
      respond: (request) => {
        const body = request.body as { thinking?: unknown; tool_choice?: { type: string } };
        return body.thinking !== undefined && (body.tool_choice?.type === 'any' || body.tool_choice?.type === 'tool') ? wireReply('error.thinking-forced-tool') : next;
      },
    });
    server.enqueue(rule(wireReply('thinking-tool-use.1')), rule(wireReply('thinking-tool-use.1')), rule(wireReply('thinking-tool-use.1')));
    const model = provider({ thinking: { budgetTokens: 3000 } });
    const required = await model.complete({ messages: ask('What is the largest city in the user country?'), tools: TOOLS, toolChoice: 'required' });
    expect(required.toolCalls.map((call) => call.name)).toEqual(['get_user_country']);
    expect(bodyOf(0)['tool_choice']).toEqual({ type: 'auto' });
    await model.complete({ messages: ask(), tools: TOOLS, toolChoice: { name: 'lookup' } });
    expect(bodyOf(1)['tool_choice']).toEqual({ type: 'auto' });
    await provider({ thinking: 'adaptive' }).complete({ messages: ask(), tools: TOOLS, toolChoice: 'required' });
    expect(bodyOf(2)['tool_choice']).toEqual({ type: 'auto' });
    // Without thinking the choice is sent as asked.
    server.enqueue(wireReply('parallel-tool-use'));
    await provider().complete({ messages: ask(), tools: TOOLS, toolChoice: 'required' });
    expect(bodyOf(3)['tool_choice']).toEqual({ type: 'any' });
  });

  it('leaves out a temperature while thinking, which Anthropic refuses', async () => {
    const rule: ScriptedReply = {
      kind: 'custom',
      respond: (request) => {
        const body = request.body as { thinking?: unknown; temperature?: number };
        return body.thinking !== undefined && body.temperature !== undefined && body.temperature !== 1 ? wireReply('error.thinking-temperature') : wireReply('text-cache-usage');
      },
    };
    server.enqueue(rule, rule);
    const thinking = await provider({ thinking: { budgetTokens: 1024 } }).complete({ messages: ask(), temperature: 0.2 });
    expect(thinking.text).toBe(textOf('text-cache-usage'));
    expect(bodyOf(0)).not.toHaveProperty('temperature');
    await provider().complete({ messages: ask(), temperature: 0.2 });
    expect(bodyOf(1)['temperature']).toBe(0.2);
  });

  it('sends a tool result that is only an image without an empty text block, which Anthropic refuses', async () => {
    const rule: ScriptedReply = {
      kind: 'custom',
      respond: (request) => (JSON.stringify(request.body).includes('"type":"text","text":""') ? wireReply('error.empty-text-block') : wireReply('text-cache-usage')),
    };
    server.enqueue(rule);
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const completion = await provider().complete({
      messages: [
        ...ask('Take a screenshot'),
        { role: 'assistant', content: null, toolCalls: [{ id: 'toolu_1', name: 'screenshot', arguments: '{}' }] },
        { role: 'tool', toolCallId: 'toolu_1', content: '', parts: [{ type: 'image', data: png, mediaType: 'image/png' }] },
      ],
    });
    expect(completion.text).toBe(textOf('text-cache-usage'));
    const sent = bodyOf(0)['messages'] as { content: unknown }[];
    expect(sent[2]?.content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }] }]);
  });

  it('keeps redacted thinking as opaque reasoning and sends its data back', async () => {
    server.enqueue(wireReply('redacted-thinking'), wireReply('text-cache-usage'));
    const model = provider({ thinking: { budgetTokens: 1024 } });
    const recorded = (wireJson('redacted-thinking')['content'] as Record<string, string>[]).filter((block) => block['type'] === 'redacted_thinking');
    const completion = await model.complete({ messages: ask('a question') });
    expect(completion.reasoning).toEqual(recorded.map((block) => ({ type: 'redacted', data: block['data'] })));
    expect(completion.text).toBe(textOf('redacted-thinking'));
    await model.complete({ messages: [...ask('a question'), { role: 'assistant', content: completion.text, reasoning: [...(completion.reasoning ?? [])] }, ...ask('and?')] });
    const sentAssistant = (bodyOf(1)['messages'] as { role: string; content: Record<string, unknown>[] }[])[1];
    expect(sentAssistant?.content.slice(0, recorded.length)).toEqual(recorded.map((block) => ({ type: 'redacted_thinking', data: block['data'] })));
  });
});

describe('anthropic stop reasons', () => {
  // No recording of these two was found: they are the recorded text reply with only its
  // stop_reason changed (and, for the refusal, Anthropic's documented stop_details).
  it('reports a reply cut by max_tokens as a length finish, the same as a cut OpenAI reply', async () => {
    server.enqueue({ kind: 'json', body: { ...wireJson('text-cache-usage'), stop_reason: 'max_tokens' } });
    const completion = await provider().complete({ messages: ask() });
    expect(completion.finishReason).toBe('length');
    expect(completion.text).toBe(textOf('text-cache-usage'));
  });

  it('reports a refusal as a content_filter finish, and a requested output as refused', async () => {
    const refused = { ...wireJson('text-cache-usage'), content: [], stop_reason: 'refusal', stop_details: { type: 'refusal', explanation: 'Blocked under the Usage Policy.' } };
    server.enqueue({ kind: 'json', body: refused }, { kind: 'json', body: refused });
    const completion = await provider().complete({ messages: ask() });
    expect(completion.finishReason).toBe('content_filter');
    expect(completion.text).toBeNull();
    const error = await provider()
      .complete({ messages: ask(), output: { name: 'answer', schema: z.object({ answer: z.string() }) } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StructuredOutputError);
    expect((error as StructuredOutputError).message).toContain('Blocked under the Usage Policy');
  });
});

describe('anthropic stream, recorded streams', () => {
  it('streams text deltas that add up to the completion', async () => {
    server.enqueue(wireReply('text.stream'));
    const events = await collect(provider().stream({ messages: ask() }));
    const done = events.at(-1);
    if (done?.type !== 'done') throw new Error('no done event');
    const deltas = events.flatMap((event) => (event.type === 'text.delta' ? [event.delta] : []));
    expect(deltas.length).toBeGreaterThan(1);
    expect(done.completion.text).toBe(deltas.join(''));
    expect(done.completion.text).toBe("Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?");
    expect(done.completion.finishReason).toBe('stop');
    expect(done.completion.usage).toMatchObject({ promptTokens: 12, completionTokens: 30 });
  });

  it('assembles a tool input from its input_json_delta fragments', async () => {
    server.enqueue(wireReply('tool-input-json.stream'));
    const events = await collect(provider().stream({ messages: ask(), tools: TOOLS }));
    const done = events.at(-1);
    if (done?.type !== 'done') throw new Error('no done event');
    const [call] = done.completion.toolCalls;
    expect(call?.id).toBe('toolu_01Cr31vcGoeeRgi3Eo5Ds8qN');
    expect(call?.name).toBe('website_update');
    expect(JSON.parse(call?.arguments ?? '')).toEqual({
      website_path: '/home/user/pace-landing',
      tasks: [
        {
          description:
            'Today you post every run to Strava, but Strava does not answer the question: "What should I do next after this run?". It is a great log, but it is not adaptive.',
          type: 'feature',
          passes: false,
        },
      ],
    });
    const fragments = events.flatMap((event) => (event.type === 'toolcall.delta' ? [event] : []));
    expect(fragments[0]).toMatchObject({ index: 0, id: 'toolu_01Cr31vcGoeeRgi3Eo5Ds8qN', name: 'website_update' });
    expect(fragments.map((event) => event.argumentsDelta).join('')).toBe(call?.arguments);
    expect(done.completion.finishReason).toBe('tool_calls');
  });

  it('keeps a tool input that a compatible server sends whole in content_block_start, with no input_json_delta', async () => {
    server.enqueue(wireReply('tool-input-at-start.stream'));
    const events = await collect(provider().stream({ messages: ask(), tools: TOOLS }));
    const done = events.at(-1);
    if (done?.type !== 'done') throw new Error('no done event');
    const [call] = done.completion.toolCalls;
    expect(call?.name).toBe('bash');
    expect(JSON.parse(call?.arguments ?? '')).toEqual({ command: 'printf hi', cwd: '/tmp/worktree', timeout: 5 });
    const fragments = events.flatMap((event) => (event.type === 'toolcall.delta' ? [event.argumentsDelta] : []));
    expect(fragments.join('')).toBe(call?.arguments);
  });

  it('streams thinking as reasoning deltas and keeps the signature from signature_delta', async () => {
    server.enqueue(wireReply('thinking.stream'));
    const events = await collect(provider({ thinking: { budgetTokens: 1024 } }).stream({ messages: ask() }));
    const done = events.at(-1);
    if (done?.type !== 'done') throw new Error('no done event');
    const reasoning = events.flatMap((event) => (event.type === 'reasoning.delta' ? [event.delta] : []));
    const text = events.flatMap((event) => (event.type === 'text.delta' ? [event.delta] : []));
    const [part] = done.completion.reasoning ?? [];
    if (part?.type !== 'thinking') throw new Error('no thinking part');
    expect(part.text).toBe(reasoning.join(''));
    expect(part.text.length).toBeGreaterThan(20);
    expect(part.signature).toMatch(/^[A-Za-z0-9+/=]{100,}$/);
    expect(done.completion.text).toBe(text.join(''));
    expect(done.completion.text).not.toContain(part.text);
  });

  it('streams redacted thinking as opaque reasoning, not as text', async () => {
    server.enqueue(wireReply('redacted-thinking.stream'));
    const events = await collect(provider({ thinking: { budgetTokens: 1024 } }).stream({ messages: ask() }));
    const done = events.at(-1);
    if (done?.type !== 'done') throw new Error('no done event');
    expect(done.completion.reasoning?.map((part) => part.type)).toEqual(['redacted', 'redacted']);
    expect(done.completion.reasoning?.[0]).toMatchObject({ data: expect.stringMatching(/^EqkECkYIBxgCKkA8/) });
    expect(done.completion.text).toMatch(/^I notice that you've sent what appears to be/);
  });
});

describe('anthropic errors, recorded error bodies', () => {
  it('retries a 529 overloaded reply like a 5xx, then answers', async () => {
    server.enqueue(wireReply('error.overloaded'), wireReply('error.overloaded'), wireReply('text-cache-usage'));
    const retries: RetryInfo[] = [];
    const completion = await provider().complete({ messages: ask(), onRetry: (info) => retries.push(info) });
    expect(completion.text).toBe(textOf('text-cache-usage'));
    expect(retries.map((retry) => (retry.error as InferenceError).status)).toEqual([529, 529]);
    expect(retries.every((retry) => retry.error instanceof InferenceError && retry.error.code === 'server_error')).toBe(true);
  });

  it('ends with InferenceError (server_error) 529 once the retries are spent', async () => {
    server.enqueue(wireReply('error.overloaded'), wireReply('error.overloaded'));
    const error = await provider({ retry: { maxRetries: 1, baseDelayMs: 1, jitter: 0 } }).complete({ messages: ask() }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'server_error' });
    expect((error as InferenceError).status).toBe(529);
    expect((error as InferenceError).message).toContain('Overloaded');
    expect(server.requests).toHaveLength(2);
  });

  it('reads a rate limit with its retry-after and waits that long before the retry', async () => {
    server.enqueue(wireReply('error.rate-limit'));
    const error = await provider({ retry: { maxRetries: 0 } }).complete({ messages: ask() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(1000);
    expect((error as RateLimitError).retryable).toBe(true);
    expect((error as RateLimitError).message).toContain('20,000 input tokens per minute');

    server.reset();
    server.enqueue(wireReply('error.rate-limit'), wireReply('text-cache-usage'));
    const retries: RetryInfo[] = [];
    await provider({ retry: { maxRetryAfterMs: 5 } }).complete({ messages: ask(), onRetry: (info) => retries.push(info) });
    expect(retries).toHaveLength(1);
    expect(retries[0]?.error).toBeInstanceOf(RateLimitError);
    // The server asked for 1 s; the policy's cap (5 ms here) bounds it.
    expect(retries[0]?.delayMs).toBe(5);
  });

  it('turns "prompt is too long" into ContextLengthError, without retrying', async () => {
    server.enqueue(wireReply('error.prompt-too-long'));
    const error = await provider().complete({ messages: ask() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContextLengthError);
    expect((error as ContextLengthError).message).toContain('214315 tokens > 204798 maximum');
    expect(error).toMatchObject({ promptTokens: 214315, limitTokens: 204798 });
    expect(server.requests).toHaveLength(1);
  });

  it('turns a 401 into AuthenticationError naming ANTHROPIC_API_KEY, never the key', async () => {
    server.enqueue(wireReply('error.authentication'));
    const error = await provider().complete({ messages: ask() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).message).toContain('invalid x-api-key');
    expect((error as AuthenticationError).message).toContain('ANTHROPIC_API_KEY');
    expect(server.requests).toHaveLength(1);
    expect(JSON.stringify(error)).not.toContain(CANARY);
    expect(String((error as Error).stack)).not.toContain(CANARY);
    // The key travels only in the auth header, never in the body.
    expect(JSON.stringify(server.requests[0]?.body)).not.toContain(CANARY);
  });

  it('redacts the key when an error body echoes it', async () => {
    server.enqueue({ kind: 'json', status: 401, body: { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${CANARY}` } } });
    const error = await provider().complete({ messages: ask() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as Error).message).not.toContain(CANARY);
    expect(String((error as Error).cause)).not.toContain(CANARY);
  });
});

describe('anthropic configuration', () => {
  it('reads ANTHROPIC_API_KEY and ANTHROPIC_MODEL, and names the key when it is missing', () => {
    expect(anthropic({ env: { ANTHROPIC_API_KEY: CANARY, ANTHROPIC_MODEL: 'claude-haiku-4-5' } }).defaultModel).toBe('claude-haiku-4-5');
    const error = (() => {
      try {
        anthropic({ env: {} });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toMatchObject({ code: 'missing_configuration' });
    expect((error as ConfigurationError).variables).toEqual(['ANTHROPIC_API_KEY']);
  });

  it('asks for adaptive thinking when told to, with room for it in max_tokens', async () => {
    server.enqueue(wireReply('text-cache-usage'));
    await provider({ thinking: 'adaptive' }).complete({ messages: ask() });
    expect(bodyOf(0)['thinking']).toEqual({ type: 'adaptive' });
    expect(bodyOf(0)['max_tokens']).toBe(4 * 4096);
  });

  it('refuses a thinking budget Anthropic would refuse', () => {
    expect(() => anthropic({ apiKey: CANARY, env: {}, thinking: { budgetTokens: 500 } })).toThrow(/at least 1024/);
    expect(() => anthropic({ apiKey: CANARY, env: {}, thinking: { budgetTokens: 2048 }, maxTokens: 2048 })).toThrow(/must exceed/);
  });

  it('prices Claude models by their dated ids, with their cache read price and writes at 1.25×', () => {
    const usage = { promptTokens: 1_000_000, completionTokens: 0, totalTokens: 1_000_000, cacheReadTokens: 500_000, cacheWriteTokens: 250_000 };
    expect(costOf('claude-haiku-4-5-20251001', usage)).toBeCloseTo(0.25 * 1 + 0.5 * 0.1 + 0.25 * 1.25, 10);
    expect(costOf('claude-haiku-4-5', { promptTokens: 1_000_000, completionTokens: 1_000_000, totalTokens: 2_000_000 })).toBeCloseTo(6, 10);
    expect(costOf('claude-sonnet-5-5', usage)).toBeCloseTo(0.25 * 2 + 0.5 * 0.1 + 0.25 * 2.5, 10);
  });
});
