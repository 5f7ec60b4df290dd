import { inspect } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { estimateTokens } from '../../src/context/estimate.ts';
import type { Message } from '../../src/core/messages.ts';
import { RateLimitError, StructuredOutputError, openAICompatible } from '../../src/inference/index.ts';
import { OPENAI_BASE_URL } from '../../src/inference/config.ts';
import type { OpenAICompatibleOptions, RetryInfo } from '../../src/inference/index.ts';
import { completionBody, reply, sseBytes, startOpenAIServer } from '../support/openaiServer.ts';
import type { OpenAIServer, ScriptedReply } from '../support/openaiServer.ts';

const CANARY = 'sk-canary-7f3a9c1e5b2d4f60aa';
let server: OpenAIServer;

beforeAll(async () => {
  server = await startOpenAIServer();
});
afterAll(() => server.close());
beforeEach(() => server.reset());

function provider(options: Partial<OpenAICompatibleOptions> = {}) {
  return openAICompatible({
    baseURL: server.baseURL,
    apiKey: CANARY,
    env: {},
    timeoutMs: 2_000,
    retry: { baseDelayMs: 1, maxDelayMs: 4, jitter: 0 },
    ...options,
  });
}

/** A provider configured for OpenAI's own endpoint, its requests carried to the local server. */
function officialProvider(options: Partial<OpenAICompatibleOptions> = {}) {
  const redirect: typeof fetch = (input, init) => fetch((input instanceof Request ? input.url : String(input)).replace(OPENAI_BASE_URL, server.baseURL), init);
  return provider({ baseURL: OPENAI_BASE_URL, fetch: redirect, ...options });
}

const ask = (content = 'hi'): Message[] => [{ role: 'user', content }];
const bodyOf = (index: number) => server.requests[index]?.body as Record<string, unknown>;

describe('openAICompatible complete', () => {
  it('sends messages, tools, tool_choice and options, and maps the reply', async () => {
    server.enqueue(
      reply.completion({
        textPieces: ['Adding.'],
        toolCalls: [{ id: 'call_a', name: 'add', argumentPieces: ['{"a":1,"b":2}'] }],
        usage: { prompt_tokens: 1_000, completion_tokens: 500, total_tokens: 1_500 },
      }),
    );
    const messages: Message[] = [
      { role: 'system', content: 'Be precise.' },
      { role: 'user', content: 'What is 1+2?' },
      { role: 'assistant', content: null, toolCalls: [{ id: 'call_0', name: 'add', arguments: '{"a":0,"b":0}' }] },
      { role: 'tool', toolCallId: 'call_0', content: '0' },
    ];
    const tools = [{ name: 'add', description: 'Add', parameters: { type: 'object', properties: { a: { type: 'number' } } } }];
    const completion = await officialProvider().complete({ messages, tools, toolChoice: { name: 'add' }, temperature: 0, maxTokens: 50 });

    const request = server.requests[0];
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/v1/chat/completions');
    expect(request?.headers.authorization).toBe(`Bearer ${CANARY}`);
    expect(request?.body).toMatchObject({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be precise.' },
        { role: 'user', content: 'What is 1+2?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'add', arguments: '{"a":0,"b":0}' } }] },
        { role: 'tool', tool_call_id: 'call_0', content: '0' },
      ],
      tools: [{ type: 'function', function: tools[0] }],
      tool_choice: { type: 'function', function: { name: 'add' } },
      temperature: 0,
      max_tokens: 50,
    });
    expect(bodyOf(0).stream).toBeFalsy();
    expect(bodyOf(0)).not.toHaveProperty('response_format');
    expect(completion).toEqual({
      text: 'Adding.',
      toolCalls: [{ id: 'call_a', name: 'add', arguments: '{"a":1,"b":2}' }],
      finishReason: 'tool_calls',
      usage: { promptTokens: 1_000, completionTokens: 500, totalTokens: 1_500 },
      model: 'gpt-4o-mini-2024-07-18',
      costUsd: (1_000 * 0.15 + 500 * 0.6) / 1_000_000,
    });
  });

  it('reports a reply stopped by the content filter as refused, not as a finished answer', async () => {
    // OpenAI and Azure: content omitted by the content filter ends with finish_reason content_filter, the text cut.
    server.enqueue(reply.completion({ textPieces: ['Here is how to'], finishReason: 'content_filter' }));
    const completion = await provider().complete({ messages: ask() });
    expect(completion.finishReason).toBe('content_filter');
    expect(completion.refusal).toMatch(/content filter/);
    server.enqueue(reply.stream({ textPieces: ['Here is', ' how to'], finishReason: 'content_filter' }));
    let done: { refusal?: string } | undefined;
    for await (const event of provider().stream({ messages: ask() })) if (event.type === 'done') done = event.completion;
    expect(done?.refusal).toMatch(/content filter/);
    // A refusal the server words itself is kept as it is.
    const body = completionBody({ finishReason: 'content_filter' });
    const choices = body['choices'] as { message: Record<string, unknown> }[];
    (choices[0] as { message: Record<string, unknown> }).message['refusal'] = "I'm sorry, I can't help with that.";
    server.enqueue(reply.json(body));
    expect((await provider().complete({ messages: ask() })).refusal).toBe("I'm sorry, I can't help with that.");
  });

  it("reports OpenAI's cached prompt tokens and prices them at the cached rate", async () => {
    // OpenAI counts cached tokens inside prompt_tokens and breaks them out in prompt_tokens_details.
    const body = completionBody({ textPieces: ['ok'], usage: { prompt_tokens: 2_000, completion_tokens: 100, total_tokens: 2_100 } });
    server.enqueue(reply.json({ ...body, usage: { ...(body['usage'] as object), prompt_tokens_details: { cached_tokens: 1_536, audio_tokens: 0 } } }));
    const completion = await officialProvider().complete({ messages: ask() });
    expect(completion.usage).toEqual({ promptTokens: 2_000, completionTokens: 100, totalTokens: 2_100, cacheReadTokens: 1_536 });
    expect(completion.costUsd).toBeCloseTo((464 * 0.15 + 1_536 * 0.075 + 100 * 0.6) / 1_000_000, 12);
    // DeepSeek reports its cache hits its own way, also inside prompt_tokens.
    server.enqueue(reply.json({ ...body, model: 'deepseek-chat', usage: { prompt_tokens: 2_000, completion_tokens: 100, total_tokens: 2_100, prompt_cache_hit_tokens: 1_920, prompt_cache_miss_tokens: 80 } }));
    const deepseek = await provider({ model: 'deepseek-chat' }).complete({ messages: ask() });
    expect(deepseek.usage.cacheReadTokens).toBe(1_920);
  });

  it('omits tools and tool_choice without tools, and uses the per-call model', async () => {
    server.enqueue(reply.completion({ textPieces: ['ok'] }));
    await provider({ model: 'default-model' }).complete({ messages: ask(), toolChoice: 'required', model: 'call-model' });
    expect(bodyOf(0).model).toBe('call-model');
    expect(bodyOf(0)).not.toHaveProperty('tools');
    expect(bodyOf(0)).not.toHaveProperty('tool_choice');
  });

  it('takes tool-call arguments a server sends as a JSON object, not a string (llama.cpp, TGI), as their JSON text', async () => {
    // The shape reported in ggml-org/llama.cpp#20198 and huggingface/text-generation-inference#2136.
    const body = completionBody({ toolCalls: [{ id: 'call_1', name: 'lookup', argumentPieces: [] }] });
    const choices = body['choices'] as { message: { tool_calls: { function: { arguments: unknown } }[] } }[];
    (choices[0]?.message.tool_calls[0] as { function: { arguments: unknown } }).function.arguments = { q: 'Paris', limit: 2 };
    server.enqueue(reply.json(body));
    const completion = await provider().complete({ messages: ask() });
    expect(completion.toolCalls).toEqual([{ id: 'call_1', name: 'lookup', arguments: '{"q":"Paris","limit":2}' }]);
    expect(server.requests).toHaveLength(1);
    // Streamed, the object comes whole in one delta.
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'local', choices: [{ index: 0, delta, finish_reason: finish }] });
    server.enqueue({ kind: 'sse', pieces: [sseBytes([chunk({ tool_calls: [{ index: 0, id: 'call_2', type: 'function', function: { name: 'lookup', arguments: { q: 'Oslo' } } }] }), chunk({}, 'tool_calls')])] });
    let done: unknown;
    for await (const event of provider().stream({ messages: ask() })) if (event.type === 'done') done = event.completion;
    expect((done as { toolCalls: unknown }).toolCalls).toEqual([{ id: 'call_2', name: 'lookup', arguments: '{"q":"Oslo"}' }]);
  });

  it('estimates usage, marked estimated, when the server sends none, and gives no cost for an unpriced model', async () => {
    server.enqueue(reply.completion({ textPieces: ['ok'], usage: null, model: 'llama3.2' }));
    const messages = ask();
    const completion = await provider({ model: 'llama3.2' }).complete({ messages });
    // Prompt by the context estimator, completion by characters / 4 of 'ok'.
    const promptTokens = estimateTokens(messages);
    expect(completion.usage).toEqual({ promptTokens, completionTokens: 1, totalTokens: promptTokens + 1, estimated: true });
    expect(completion).not.toHaveProperty('costUsd');
    // A reply in Chinese is measured by its UTF-8 bytes, as the prompt is: 8 characters, 24 bytes.
    server.enqueue(reply.completion({ textPieces: ['北京是中国的首都'], usage: null, model: 'llama3.2' }));
    const chinese = await provider({ model: 'llama3.2' }).complete({ messages });
    expect(chinese.usage.completionTokens).toBe(6);
  });

  it('gives no cost for a known model name on a custom baseURL: that server does not bill OpenAI list prices', async () => {
    server.enqueue(reply.completion({ textPieces: ['ok'], model: 'gpt-4o-mini', usage: { prompt_tokens: 1_000, completion_tokens: 500, total_tokens: 1_500 } }));
    const completion = await provider({ model: 'gpt-4o-mini' }).complete({ messages: ask() });
    expect(completion.usage.totalTokens).toBe(1_500);
    expect(completion).not.toHaveProperty('costUsd');
  });

  it('prices a known model name on a custom baseURL at the prices the user gives', async () => {
    server.enqueue(reply.completion({ textPieces: ['ok'], model: 'gpt-4o-mini', usage: { prompt_tokens: 1_000_000, completion_tokens: 1_000_000, total_tokens: 2_000_000 } }));
    const completion = await provider({ model: 'gpt-4o-mini', prices: { 'gpt-4o-mini': { promptPerMillion: 0.5, completionPerMillion: 1 } } }).complete({ messages: ask() });
    expect(completion.costUsd).toBe(1.5);
  });

  it('prices models from the configured table', async () => {
    server.enqueue(reply.completion({ textPieces: ['ok'], model: 'my-model', usage: { prompt_tokens: 2_000_000, completion_tokens: 1_000_000, total_tokens: 3_000_000 } }));
    const completion = await provider({ prices: { 'my-model': { promptPerMillion: 1, completionPerMillion: 3 } } }).complete({ messages: ask() });
    expect(completion.costUsd).toBe(5);
  });

  it('returns null text for a tool-only reply', async () => {
    server.enqueue(reply.completion({ toolCalls: [{ id: 'c1', name: 'now', argumentPieces: ['{}'] }] }));
    const completion = await provider().complete({ messages: ask() });
    expect(completion.text).toBeNull();
    expect(completion.finishReason).toBe('tool_calls');
  });
});

describe('openAICompatible structured output', () => {
  const Weather = z.object({ city: z.string(), celsius: z.number() });
  const output = { name: 'weather', schema: Weather };

  it('sends a strict json_schema response_format and returns the validated value', async () => {
    server.enqueue(reply.completion({ textPieces: ['{"city":"Zürich",', '"celsius":21}'] }));
    const completion = await provider().complete({ messages: ask(), output });
    expect(completion.output).toEqual({ city: 'Zürich', celsius: 21 });
    expect(bodyOf(0).response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'weather',
        schema: {
          type: 'object',
          properties: { city: { type: 'string' }, celsius: { type: 'number' } },
          required: ['city', 'celsius'],
          additionalProperties: false,
        },
        strict: true,
      },
    });
  });

  it('fails with StructuredOutputError carrying the issues and the raw text, without retrying', async () => {
    server.enqueue(reply.completion({ textPieces: ['{"city":"Bern","celsius":"warm"}'] }));
    const error = await provider().complete({ messages: ask(), output }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StructuredOutputError);
    const typed = error as StructuredOutputError;
    expect(typed.issues).toEqual([expect.objectContaining({ code: 'invalid_type', path: ['celsius'] })]);
    expect(typed.text).toBe('{"city":"Bern","celsius":"warm"}');
    expect(typed.blame).toBe('model');
    expect(server.requests).toHaveLength(1);
  });

  it('reports a reply that is not JSON as a StructuredOutputError', async () => {
    server.enqueue(reply.completion({ textPieces: ['It is warm in Bern.'] }));
    const error = await provider().complete({ messages: ask(), output }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StructuredOutputError);
    expect((error as StructuredOutputError).issues[0]?.message).toMatch(/not JSON/);
  });
});

describe('openAICompatible retries', () => {
  it('retries a 429 after exactly the retry-after-ms wait', async () => {
    server.enqueue(reply.rateLimited({ retryAfterMs: 20 }), reply.completion({ textPieces: ['ok'] }));
    const retries: RetryInfo[] = [];
    const started = performance.now();
    const completion = await provider().complete({ messages: ask(), onRetry: (info) => retries.push(info) });
    expect(completion.text).toBe('ok');
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
    expect(server.requests).toHaveLength(2);
    expect(retries).toEqual([{ attempt: 1, delayMs: 20, error: expect.any(RateLimitError) }]);
  });

  it('honours Retry-After in seconds, capped at maxRetryAfterMs', async () => {
    server.enqueue(reply.rateLimited({ retryAfter: '0.03' }), reply.rateLimited({ retryAfter: '120' }), reply.completion());
    const delays: number[] = [];
    await provider({ retry: { baseDelayMs: 1, jitter: 0, maxRetryAfterMs: 25 } }).complete({
      messages: ask(),
      onRetry: ({ delayMs }) => delays.push(delayMs),
    });
    expect(delays).toEqual([25, 25]);
    server.reset();
    server.enqueue(reply.rateLimited({ retryAfter: '0.03' }), reply.completion());
    await provider().complete({ messages: ask(), onRetry: ({ delayMs }) => delays.push(delayMs) });
    expect(delays.at(-1)).toBe(30);
  });

  it.each([
    ['500', reply.error(500), 'server_error'],
    ['503', reply.error(503, 'overloaded'), 'server_error'],
    ['a connection reset', reply.reset(), 'network'],
    ['a malformed JSON body', reply.malformed(), 'invalid_response'],
    ['a body without choices', reply.json({ id: 'x', object: 'chat.completion' }), 'invalid_response'],
    ['an error object in a 200 body', reply.json({ error: { code: 502, message: 'upstream failed' } }), 'server_error'],
  ] as const)('retries %s with exponential backoff', async (_label, failure, expectedCode) => {
    server.enqueue(failure, failure, reply.completion({ textPieces: ['ok'] }));
    const retries: RetryInfo[] = [];
    const completion = await provider().complete({ messages: ask(), onRetry: (info) => retries.push(info) });
    expect(completion.text).toBe('ok');
    expect(server.requests).toHaveLength(3);
    expect(retries.map((r) => r.delayMs)).toEqual([1, 2]);
    expect(retries[0]?.error).toMatchObject({ code: expectedCode });
  });

  it('gives up after maxRetries + 1 requests with the typed error', async () => {
    for (let i = 0; i < 5; i++) server.enqueue(reply.error(503, 'overloaded'));
    const error = await provider().complete({ messages: ask() }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'server_error' });
    expect(error).toMatchObject({ status: 503, retryable: true, code: 'server_error' });
    expect(server.requests).toHaveLength(4);

    server.reset();
    for (let i = 0; i < 5; i++) server.enqueue(reply.reset());
    const network = await provider({ retry: { maxRetries: 1, baseDelayMs: 1 } }).complete({ messages: ask() }).catch((e: unknown) => e);
    expect(network).toMatchObject({ code: 'network' });
    expect(server.requests).toHaveLength(2);
  });

  it.each([
    ['401', reply.error(401, 'Incorrect API key provided', 'invalid_api_key'), 'authentication', /OPENAI_API_KEY/],
    ['403', reply.error(403, 'Project does not have access'), 'authentication', /OPENAI_API_KEY/],
    ['a context-length 400', reply.contextLength(), 'context_length_exceeded', /context budget/],
    ['a plain 400', reply.error(400, "Unrecognized request argument supplied: foo"), 'bad_request', /Unrecognized request argument/],
    ['a 404', reply.error(404, 'The model `nope` does not exist'), 'bad_request', /base URL/],
    ['a 429 for exhausted quota', reply.error(429, 'You exceeded your current quota', 'insufficient_quota'), 'rate_limited', /credits/],
  ] as const)('never retries %s', async (_label, failure, expectedCode, message) => {
    server.enqueue(failure, reply.completion());
    const retries: RetryInfo[] = [];
    const error = await provider().complete({ messages: ask(), onRetry: (info) => retries.push(info) }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: expectedCode });
    expect((error as Error).message).toMatch(message);
    expect((error as { retryable: boolean }).retryable).toBe(false);
    expect(server.requests).toHaveLength(1);
    expect(retries).toEqual([]);
  });

  it('times out a reply slower than timeoutMs, then retries it', async () => {
    server.enqueue(reply.slow(1_500, reply.completion({ textPieces: ['late'] })), reply.completion({ textPieces: ['on time'] }));
    const retries: RetryInfo[] = [];
    const started = performance.now();
    const completion = await provider({ timeoutMs: 200 }).complete({ messages: ask(), onRetry: (info) => retries.push(info) });
    expect(completion.text).toBe('on time');
    expect(performance.now() - started).toBeLessThan(1_200);
    expect(retries[0]?.error).toMatchObject({ code: 'provider_timeout' });
    expect(server.requests).toHaveLength(2);

    server.reset();
    server.enqueue(reply.slow(1_500, reply.completion()));
    const error = await provider({ timeoutMs: 200, retry: { maxRetries: 0 } }).complete({ messages: ask() }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'provider_timeout' });
    expect((error as Error).message).toContain('200 ms');
  });
});

describe('openAICompatible cancellation', () => {
  it('rejects promptly with the abort reason when aborted mid-call, and does not retry', async () => {
    server.enqueue(reply.slow(1_500, reply.completion()), reply.completion());
    const controller = new AbortController();
    const retries: RetryInfo[] = [];
    const started = performance.now();
    setTimeout(() => controller.abort(), 50);
    const error = await provider().complete({ messages: ask(), signal: controller.signal, onRetry: (i) => retries.push(i) }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'AbortError' });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(server.requests).toHaveLength(1);
    expect(retries).toEqual([]);
  });

  it('stops waiting for a retry when aborted during the backoff', async () => {
    server.enqueue(reply.rateLimited({ retryAfterMs: 5_000 }), reply.completion());
    const controller = new AbortController();
    const reason = new Error('user pressed stop');
    const started = performance.now();
    const pending = provider().complete({ messages: ask(), signal: controller.signal, onRetry: () => controller.abort(reason) });
    await expect(pending).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(server.requests).toHaveLength(1);
  });

  it('sends nothing when the signal is already aborted', async () => {
    await expect(provider().complete({ messages: ask(), signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    expect(server.requests).toHaveLength(0);
  });
});

describe('openAICompatible API key hygiene', () => {
  const echoKey = reply.custom((request) => reply.error(401, `Incorrect API key provided: ${String(request.headers.authorization)}`));
  const failures: [string, ScriptedReply][] = [
    ['401 echoing the key', echoKey],
    ['400 echoing the key', reply.custom((request) => reply.error(400, `bad header ${String(request.headers.authorization)}`))],
    ['500', reply.error(500)],
    ['connection reset', reply.reset()],
    ['malformed body', reply.malformed()],
  ];

  it.each(failures)('keeps the key out of the error for a %s', async (_label, failure) => {
    server.enqueue(failure);
    const error = await provider({ retry: { maxRetries: 0 } }).complete({ messages: ask() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(server.requests[0]?.headers.authorization).toContain(CANARY);
    expect((error as Error).message).not.toContain(CANARY);
    expect(JSON.stringify(error)).not.toContain(CANARY);
    expect(inspect(error, { depth: 10, showHidden: true })).not.toContain(CANARY);
    expect(Object.values(error as object).map((v) => inspect(v, { depth: 10 })).join()).not.toContain(CANARY);
  });

  it('keeps the key out of the provider object', () => {
    const model = provider();
    expect(JSON.stringify(model)).not.toContain(CANARY);
    expect(inspect(model, { depth: 10, showHidden: true })).not.toContain(CANARY);
  });

  it('redacts the key from a 401 message but keeps the rest of it', async () => {
    server.enqueue(echoKey);
    const error = await provider().complete({ messages: ask() }).catch((e: unknown) => e);
    expect((error as Error).message).toContain('Incorrect API key provided: Bearer [redacted]');
  });
});

describe('openAICompatible request headers', () => {
  it('sends configured extra headers', async () => {
    server.enqueue({ kind: 'json', body: completionBody() });
    await provider({ headers: { 'X-Title': 'actorloop tests' } }).complete({ messages: ask() });
    expect(server.requests[0]?.headers['x-title']).toBe('actorloop tests');
  });
});
