import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RateLimitError, StructuredOutputError, openAICompatible } from '../../src/inference/index.ts';
import type { Completion, CompletionRequest, OpenAICompatibleOptions, RetryInfo, StreamEvent } from '../../src/inference/index.ts';
import { chunksFor, reply, sseBytes, splitAt, startOpenAIServer } from '../support/openaiServer.ts';
import type { OpenAIServer, ReplySpec } from '../support/openaiServer.ts';

let server: OpenAIServer;

beforeAll(async () => {
  server = await startOpenAIServer();
});
afterAll(() => server.close());
beforeEach(() => server.reset());

function provider(options: Partial<OpenAICompatibleOptions> = {}) {
  return openAICompatible({
    baseURL: server.baseURL,
    apiKey: 'sk-test-streaming-key',
    env: {},
    timeoutMs: 2_000,
    retry: { baseDelayMs: 1, maxDelayMs: 4, jitter: 0 },
    ...options,
  });
}

const request: CompletionRequest = { messages: [{ role: 'user', content: 'weather in Zürich and Tokyo?' }] };

/** Multi-byte text and tool-call arguments cut mid-value, as real streams deliver them. */
const SPEC: ReplySpec = {
  textPieces: ['Grüße ', 'aus ', '世界', ' 🌍🚀', '…'],
  toolCalls: [
    { id: 'call_w1', name: 'weather', argumentPieces: ['{"ci', 'ty":"Zü', 'rich","unit":"°C"}'] },
    { id: 'call_w2', name: 'weather', argumentPieces: ['{"city":', '"東京"', '}'] },
  ],
  usage: { prompt_tokens: 40, completion_tokens: 25, total_tokens: 65 },
};

async function collect<T>(events: AsyncIterable<StreamEvent<T>>): Promise<StreamEvent<T>[]> {
  const out: StreamEvent<T>[] = [];
  for await (const event of events) out.push(event);
  return out;
}

function doneOf<T>(events: readonly StreamEvent<T>[]): Completion<T> {
  const done = events.filter((event) => event.type === 'done');
  expect(done).toHaveLength(1);
  expect(events.at(-1)?.type).toBe('done');
  return (done[0] as Extract<StreamEvent<T>, { type: 'done' }>).completion;
}

async function failureOf(events: AsyncIterable<StreamEvent>, seen: StreamEvent[] = []): Promise<unknown> {
  try {
    for await (const event of events) seen.push(event);
  } catch (error) {
    return error;
  }
  throw new Error('the stream did not fail');
}

describe('openAICompatible stream', () => {
  it('asks for a stream with usage and yields deltas, then one done', async () => {
    server.enqueue(reply.stream({ textPieces: ['Hel', 'lo'], toolCalls: [{ id: 'c1', name: 'add', argumentPieces: ['{"a":', '1}'] }] }));
    const events = await collect(provider().stream(request));
    expect(server.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user' }] });
    expect(events.slice(0, -1)).toEqual([
      { type: 'text.delta', delta: 'Hel' },
      { type: 'text.delta', delta: 'lo' },
      { type: 'toolcall.delta', index: 0, id: 'c1', name: 'add', argumentsDelta: '' },
      { type: 'toolcall.delta', index: 0, argumentsDelta: '{"a":' },
      { type: 'toolcall.delta', index: 0, argumentsDelta: '1}' },
    ]);
    expect(doneOf(events)).toMatchObject({ text: 'Hello', toolCalls: [{ id: 'c1', name: 'add', arguments: '{"a":1}' }], finishReason: 'tool_calls' });
  });

  it('assembles exactly the Completion the non-streamed call returns', async () => {
    server.enqueue(reply.completion(SPEC), reply.stream(SPEC));
    // A custom endpoint is priced only as the user prices it.
    const prices = { 'gpt-4o-mini': { promptPerMillion: 1, completionPerMillion: 2 } };
    const plain = await provider({ prices }).complete(request);
    const streamed = doneOf(await collect(provider({ prices }).stream(request)));
    expect(streamed).toEqual(plain);
    expect(plain).toMatchObject({
      text: 'Grüße aus 世界 🌍🚀…',
      toolCalls: [
        { id: 'call_w1', name: 'weather', arguments: '{"city":"Zürich","unit":"°C"}' },
        { id: 'call_w2', name: 'weather', arguments: '{"city":"東京"}' },
      ],
      usage: { promptTokens: 40, completionTokens: 25, totalTokens: 65 },
    });
    expect(plain.costUsd).toBeGreaterThan(0);
  });

  it('validates structured output at the end of a stream', async () => {
    const output = { name: 'answer', schema: z.object({ answer: z.number() }) };
    server.enqueue(reply.stream({ textPieces: ['{"answer"', ':42}'] }), reply.stream({ textPieces: ['{"answer":"many"}'] }));
    expect(doneOf(await collect(provider().stream({ ...request, output }))).output).toEqual({ answer: 42 });
    expect(server.requests[0]?.body).toMatchObject({ response_format: { type: 'json_schema' } });
    expect(await failureOf(provider().stream({ ...request, output }))).toBeInstanceOf(StructuredOutputError);
  });

  it.each(['end', 'destroy'] as const)(
    'fails with InferenceError (stream_interrupted) when cut inside a tool call (%s), never delivering the partial call',
    async (end) => {
      // role, 5 text chunks, first call's header and one argument fragment: cut mid-arguments.
      server.enqueue(reply.streamCut(SPEC, 8, end), reply.stream(SPEC));
      const seen: StreamEvent[] = [];
      const retries: RetryInfo[] = [];
      const error = await failureOf(provider().stream({ ...request, onRetry: (info) => retries.push(info) }), seen);
      expect(error).toMatchObject({ code: 'stream_interrupted' });
      expect(error).toMatchObject({ retryable: false, code: 'stream_interrupted' });
      expect(seen.some((event) => event.type === 'done')).toBe(false);
      expect(seen.filter((event) => event.type === 'toolcall.delta').map((e) => e.type === 'toolcall.delta' && e.argumentsDelta)).toEqual(['', '{"ci']);
      // No silent second attempt once deltas were yielded.
      expect(server.requests).toHaveLength(1);
      expect(retries).toEqual([]);
    },
  );

  it('retries a stream cut before any delta was yielded', async () => {
    server.enqueue(reply.streamCut(SPEC, 1, 'destroy'), reply.streamCut(SPEC, 1, 'end'), reply.stream(SPEC));
    const retries: RetryInfo[] = [];
    const events = await collect(provider().stream({ ...request, onRetry: (info) => retries.push(info) }));
    expect(doneOf(events).text).toBe('Grüße aus 世界 🌍🚀…');
    // Each delta was yielded once: the failed attempts yielded nothing.
    expect(events.filter((e) => e.type === 'text.delta')).toHaveLength(5);
    expect(server.requests).toHaveLength(3);
    expect(retries).toHaveLength(2);
  });

  it('retries a 429 before the stream starts, honouring retry-after-ms', async () => {
    server.enqueue(reply.rateLimited({ retryAfterMs: 15 }), reply.stream(SPEC));
    const retries: RetryInfo[] = [];
    const events = await collect(provider().stream({ ...request, onRetry: (info) => retries.push(info) }));
    expect(doneOf(events).toolCalls).toHaveLength(2);
    expect(retries).toEqual([{ attempt: 1, delayMs: 15, error: expect.any(RateLimitError) }]);
  });

  it('fails with InferenceError (stream_interrupted) when the server goes silent after deltas', async () => {
    server.enqueue(reply.streamCut(SPEC, 4, 'hang'));
    const seen: StreamEvent[] = [];
    const started = performance.now();
    const error = await failureOf(provider({ timeoutMs: 200 }).stream(request), seen);
    expect(error).toMatchObject({ code: 'stream_interrupted' });
    expect((error as Error).cause).toMatchObject({ code: 'provider_timeout' });
    expect(seen.length).toBe(3);
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(server.requests).toHaveLength(1);
  });

  it('times out and retries a stream whose headers never come', async () => {
    server.enqueue(reply.slow(1_500, reply.stream(SPEC)), reply.stream(SPEC));
    const events = await collect(provider({ timeoutMs: 200 }).stream(request));
    expect(doneOf(events).text).toBe('Grüße aus 世界 🌍🚀…');
    expect(server.requests).toHaveLength(2);
  });

  it('rejects with the abort reason when aborted mid-stream, without retrying', async () => {
    server.enqueue(reply.stream(SPEC, undefined, 40), reply.stream(SPEC));
    const controller = new AbortController();
    const seen: StreamEvent[] = [];
    const started = performance.now();
    const error = await failureOf(
      (async function* () {
        for await (const event of provider().stream({ ...request, signal: controller.signal })) {
          if (event.type === 'text.delta') controller.abort();
          yield event;
        }
      })(),
      seen,
    );
    expect(error).toMatchObject({ name: 'AbortError' });
    expect(seen).toEqual([{ type: 'text.delta', delta: 'Grüße ' }]);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(server.requests).toHaveLength(1);
  });

  it('lets the consumer stop early and the next call still works', async () => {
    server.enqueue(reply.stream(SPEC, undefined, 20), reply.completion({ textPieces: ['next'] }));
    for await (const event of provider().stream(request)) if (event.type === 'text.delta') break;
    const next = await provider({ timeoutMs: 500 }).complete(request);
    expect(next.text).toBe('next');
  });

  it('reassembles the same Completion however the bytes are split (property)', async () => {
    const bytes = sseBytes(chunksFor(SPEC));
    const expected = await (async () => {
      server.enqueue(reply.completion(SPEC));
      return provider().complete(request);
    })();
    // Offsets inside multi-byte characters and inside argument JSON, always among the runs.
    const text = new TextDecoder().decode(bytes);
    const byteOffsetOf = (needle: string) => new TextEncoder().encode(text.slice(0, text.indexOf(needle))).length;
    const examples: [number[]][] = [
      [[byteOffsetOf('世') + 1, byteOffsetOf('🌍') + 2, byteOffsetOf('東') + 1]],
      [[byteOffsetOf('ty\\":\\"Zü') + 1, byteOffsetOf('°') + 1, byteOffsetOf('[DONE]') + 2]],
    ];
    const client = provider();
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 12 }), async (offsets) => {
        server.reset();
        server.enqueue({ kind: 'sse', pieces: splitAt(bytes, offsets), gapMs: 0 });
        const events = await collect(client.stream(request));
        const completion = doneOf(events);
        expect(completion).toEqual(expected);
        const deltas = events.flatMap((e) => (e.type === 'text.delta' ? [e.delta] : []));
        expect(deltas.join('')).toBe(expected.text);
        expect(server.requests).toHaveLength(1);
      }),
      { numRuns: 60, examples },
    );
  });
});
