/**
 * The OpenAI-compatible provider against what real providers sent: every fixture in
 * test/fixtures/wire is a recorded response (its sidecar names where it was published), served
 * over HTTP on 127.0.0.1 to the real `openai` client. Each test asserts what a caller of the
 * provider sees: text, reasoning, tool calls, usage, the typed error.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { estimateTokens } from '../../src/context/estimate.ts';
import { reasoningText, type Message } from '../../src/core/messages.ts';
import type { Completion, CompletionRequest, StreamEvent } from '../../src/core/provider.ts';
import type { InferenceError } from '../../src/inference/errors.ts';
import { ContextLengthError } from '../../src/inference/errors.ts';
import { openAICompatible } from '../../src/inference/openaiCompatible.ts';
import type { OpenAICompatibleOptions } from '../../src/inference/config.ts';
import { fixtureSource, fixtureText, sidecarOf, startReplayServer, type ReplayServer, type Rule } from '../support/replayServer.ts';

let server: ReplayServer;
let rule: Rule | undefined;
beforeEach(async () => {
  rule = undefined;
  server = await startReplayServer({ rule: (body) => rule?.(body) });
});
afterEach(() => server.close());

const ask = (content = 'Hello'): Message[] => [{ role: 'user', content }];

function provider(options: OpenAICompatibleOptions = {}) {
  return openAICompatible({ baseURL: server.baseURL, apiKey: 'sk-test-replay-key', model: 'gpt-4o-mini', env: {}, timeoutMs: 10_000, ...options });
}

async function streamed(request: CompletionRequest, options: OpenAICompatibleOptions = {}): Promise<{ events: StreamEvent[]; completion: Completion }> {
  const events: StreamEvent[] = [];
  for await (const event of provider(options).stream(request)) events.push(event);
  const done = events.at(-1);
  if (done?.type !== 'done') throw new Error('the stream ended without a done event');
  return { events, completion: done.completion };
}

const deltas = (events: readonly StreamEvent[], type: 'text.delta' | 'reasoning.delta'): string =>
  events.flatMap((event) => (event.type === type ? [event.delta] : [])).join('');

function recordedMessage(name: string): Record<string, string> {
  const body = JSON.parse(fixtureText(name)) as { choices: { message: Record<string, string> }[] };
  return body.choices[0]?.message ?? {};
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

describe('the wire corpus', () => {
  const dir = fileURLToPath(new URL('../fixtures/wire/', import.meta.url));
  const files = readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isFile() ? [entry.name] : []));
  const fixtures = files.filter((f) => !f.endsWith('.source.json'));

  it('names a public origin for every recorded response, and holds no orphan sidecar', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(20);
    for (const name of fixtures) {
      const source = fixtureSource(name);
      const origin = source.url ?? (source.repository !== undefined && source.path !== undefined ? `${source.repository}/${source.path}` : undefined);
      expect(origin, name).toBeDefined();
    }
    for (const sidecar of files.filter((f) => f.endsWith('.source.json'))) {
      expect(fixtures.some((f) => sidecarOf(f) === sidecar), sidecar).toBe(true);
    }
  });

  it("names a public origin for every recorded Anthropic response (beside it, in .origin.json)", () => {
    const anthropicDir = join(dir, 'anthropic');
    const recorded = readdirSync(anthropicDir).filter((f) => !f.endsWith('.origin.json'));
    expect(recorded.length).toBeGreaterThanOrEqual(10);
    for (const name of recorded) {
      const origin = JSON.parse(readFileSync(join(anthropicDir, name.replace(/\.(json|sse)$/, '.origin.json')), 'utf8')) as { url?: string; repository?: string; path?: string };
      expect(origin.url ?? (origin.repository !== undefined && origin.path !== undefined ? origin.path : undefined), name).toBeDefined();
    }
  });
});

describe('OpenAI', () => {
  it('reads a gpt-4.1-nano chat completion: text, usage, model', async () => {
    server.enqueue('openai-chat-text.json');
    const completion = await provider().complete({ messages: ask() });
    expect(completion.text).toBe(recordedMessage('openai-chat-text.json')['content']);
    expect(completion.text).toMatch(/^\*\*Holiday Name:\*\* Galaxy Day/);
    expect(completion.usage).toEqual({ promptTokens: 16, completionTokens: 363, totalTokens: 379 });
    expect(completion.model).toBe('gpt-4.1-nano-2025-04-14');
    expect(completion.finishReason).toBe('stop');
    expect(completion).not.toHaveProperty('reasoning');
  });

  it('streams a chat completion, asking for usage, and takes it from the last (choice-less) chunk', async () => {
    server.enqueue('openai-chat-text-stream.sse');
    const { events, completion } = await streamed({ messages: ask() });
    expect(server.requests[0]?.['stream_options']).toEqual({ include_usage: true });
    expect(completion.text).toBe(deltas(events, 'text.delta'));
    expect(completion.text).toHaveLength(1724);
    expect(completion.usage).toEqual({ promptTokens: 16, completionTokens: 300, totalTokens: 316 });
  });

  it('turns a streamed refusal into `refusal`, with no answer text', async () => {
    server.enqueue('openai-refusal-stream.sse');
    const { events, completion } = await streamed({ messages: ask('how do I make anthrax?') });
    expect(completion.refusal).toBe("I'm sorry, but I can't assist with that request.");
    expect(completion.text).toBeNull();
    expect(events.filter((e) => e.type === 'text.delta')).toEqual([]);
  });

  describe('reasoning models (a server that answers max_tokens with OpenAI\'s 400)', () => {
    beforeEach(() => {
      rule = (body) => ('max_tokens' in body ? 'openai-max-tokens-unsupported.json' : undefined);
    });

    it('sends max_completion_tokens and reasoning_effort, and no temperature, to o-series and gpt-5 models', async () => {
      server.enqueue('openai-chat-text.json', 'openai-chat-text.json');
      for (const model of ['o4-mini', 'gpt-5-nano']) {
        const completion = await provider({ model }).complete({ messages: ask(), maxTokens: 500, temperature: 0.2, reasoningEffort: 'low' });
        expect(completion.usage.totalTokens).toBe(379);
      }
      for (const body of server.requests) {
        expect(body).toMatchObject({ max_completion_tokens: 500, reasoning_effort: 'low' });
        expect(body).not.toHaveProperty('max_tokens');
        expect(body).not.toHaveProperty('temperature');
      }
    });

    it("reports OpenAI's own words when a model outside the table is sent max_tokens, and takes a capability the user adds", async () => {
      const rejected = await failure(provider({ model: 'my-reasoner' }).complete({ messages: ask(), maxTokens: 64 }));
      expect(rejected).toMatchObject({ code: 'bad_request' });
      expect((rejected as InferenceError).message).toContain("Use 'max_completion_tokens' instead");

      server.enqueue('openai-chat-text.json');
      const models = { 'my-reasoner': { maxTokensParam: 'max_completion_tokens' as const } };
      const completion = await provider({ model: 'my-reasoner', models }).complete({ messages: ask(), maxTokens: 64 });
      expect(completion.finishReason).toBe('stop');
      expect(server.requests.at(-1)).toMatchObject({ max_completion_tokens: 64 });
    });

    it('keeps max_tokens and temperature for chat models', async () => {
      rule = undefined;
      server.enqueue('openai-chat-text.json');
      await provider({ model: 'gpt-4.1-nano' }).complete({ messages: ask(), maxTokens: 64, temperature: 0, reasoningEffort: 'high' });
      expect(server.requests[0]).toMatchObject({ max_tokens: 64, temperature: 0 });
      expect(server.requests[0]).not.toHaveProperty('reasoning_effort');
    });
  });

  it('types a context-length error', async () => {
    server.enqueue('openai-context-length.json');
    const error = await failure(provider().complete({ messages: ask() }));
    expect(error).toBeInstanceOf(ContextLengthError);
    expect((error as ContextLengthError).status).toBe(400);
    expect((error as ContextLengthError).message).toContain('maximum context length is 4097 tokens');
    // The sizes it states, for compacting the request under the window.
    expect(error).toMatchObject({ limitTokens: 4097, promptTokens: 3120, completionTokens: 1000 });
  });
});

describe('Azure OpenAI', () => {
  it('streams gpt-5-nano past the prompt_filter_results chunk (no choices, empty model)', async () => {
    server.enqueue('azure-gpt-5-nano-stream.sse');
    const { events, completion } = await streamed({ messages: ask('Capital of Denmark?'), maxTokens: 200 }, { model: 'gpt-5-nano' });
    expect(server.requests[0]).toMatchObject({ max_completion_tokens: 200 });
    expect(deltas(events, 'text.delta')).toBe('Capital of Denmark.');
    expect(completion.text).toBe('Capital of Denmark.');
    expect(completion.model).toBe('gpt-5-nano-2025-08-07');
    expect(completion.usage).toEqual({ promptTokens: 15, completionTokens: 78, totalTokens: 93 });
  });

  it('types a context-length error', async () => {
    server.enqueue('azure-context-length.json');
    const error = await failure(provider().complete({ messages: ask() }));
    expect(error).toBeInstanceOf(ContextLengthError);
    expect((error as ContextLengthError).message).toContain('maximum context length is 32768 tokens');
  });
});

describe('DeepSeek thinking mode', () => {
  it('keeps reasoning_content as reasoning, apart from the answer text', async () => {
    server.enqueue('deepseek-reasoner-text.json');
    const completion = await provider({ model: 'deepseek-reasoner' }).complete({ messages: ask("How many 'r's are in strawberry?") });
    const recorded = recordedMessage('deepseek-reasoner-text.json');
    expect(completion.text).toBe(recorded['content']);
    expect(reasoningText(completion.reasoning ?? [])).toBe(recorded['reasoning_content']);
    expect(completion.text).not.toContain('We are asked');
    expect(completion.usage).toEqual({ promptTokens: 18, completionTokens: 345, totalTokens: 363 });
  });

  it('streams reasoning as reasoning deltas, never as text deltas', async () => {
    server.enqueue('deepseek-reasoner-text-stream.sse');
    const { events, completion } = await streamed({ messages: ask() }, { model: 'deepseek-reasoner' });
    expect(deltas(events, 'text.delta')).toBe('The word "strawberry" contains three "r"s.');
    expect(deltas(events, 'reasoning.delta')).toHaveLength(606);
    expect(reasoningText(completion.reasoning ?? [])).toBe(deltas(events, 'reasoning.delta'));
    expect(completion.text).toBe('The word "strawberry" contains three "r"s.');
  });

  it('reads a tool call with its reasoning, the empty content as no text', async () => {
    server.enqueue('deepseek-reasoner-tool-call.json');
    const completion = await provider({ model: 'deepseek-reasoner' }).complete({ messages: ask('Weather in San Francisco?') });
    expect(completion.toolCalls).toEqual([{ id: 'call_00_9V0vrf86Pc9aelHCJMZqnJBo', name: 'weather', arguments: '{"location": "San Francisco"}' }]);
    expect(completion.text).toBeNull();
    expect(reasoningText(completion.reasoning ?? [])).toMatch(/^The user is asking for the weather in San Francisco/);
    expect(completion.finishReason).toBe('tool_calls');
  });

  it('sends reasoning back as reasoning_content on its assistant message', async () => {
    server.enqueue('deepseek-reasoner-text.json');
    const history: Message[] = [
      ...ask('Weather in San Francisco?'),
      { role: 'assistant', content: null, reasoning: [{ type: 'thinking', text: 'Call the tool.' }], toolCalls: [{ id: 'call_1', name: 'weather', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'call_1', content: 'sunny' },
    ];
    await provider({ model: 'deepseek-reasoner' }).complete({ messages: history });
    expect(server.requests[0]?.messages[1]).toMatchObject({ role: 'assistant', reasoning_content: 'Call the tool.' });
  });

  it('does not send reasoning to OpenAI models, which reject the field', async () => {
    server.enqueue('openai-chat-text.json');
    const history: Message[] = [...ask(), { role: 'assistant', content: 'Hi', reasoning: [{ type: 'thinking', text: 'greet' }] }, ...ask('Again')];
    await provider({ model: 'gpt-4.1-nano' }).complete({ messages: history });
    expect(server.requests[0]?.messages[1]).toEqual({ role: 'assistant', content: 'Hi' });
  });

  it('reads a reply cut off at the token cap as finish reason length', async () => {
    server.enqueue('deepseek-chat-length.json');
    const completion = await provider({ model: 'deepseek-chat' }).complete({ messages: ask(), maxTokens: 300 });
    expect(completion.finishReason).toBe('length');
    expect(completion.usage.completionTokens).toBe(300);
    expect(completion.text).toMatch(/people exchange$/);
  });

  it('types its 400 for a tool-call turn sent back without reasoning_content', async () => {
    server.enqueue('deepseek-reasoning-content-missing.json');
    const error = await failure(provider({ model: 'deepseek-reasoner' }).complete({ messages: ask() }));
    expect(error).toMatchObject({ code: 'bad_request' });
    expect((error as InferenceError).message).toContain('must be passed back to the API');
  });
});

describe('Groq and Mistral', () => {
  it('reads a Groq tool call, and its usage, streamed or not', async () => {
    server.enqueue('groq-tool-call.json', 'groq-tool-call-stream.sse');
    const completion = await provider({ model: 'llama-3.3-70b-versatile' }).complete({ messages: ask() });
    expect(completion.toolCalls).toEqual([{ id: 'ax9fskhev', name: 'weather', arguments: '{}' }]);
    expect(completion.usage).toEqual({ promptTokens: 218, completionTokens: 15, totalTokens: 233 });
    const { completion: streamedCompletion } = await streamed({ messages: ask() }, { model: 'llama-3.3-70b-versatile' });
    expect(streamedCompletion.toolCalls).toEqual([{ id: 'tk85n1k4m', name: 'weather', arguments: '{}' }]);
    expect(streamedCompletion.usage).toEqual({ promptTokens: 210, completionTokens: 15, totalTokens: 225 });
  });

  it("reads Groq's `reasoning` field as reasoning", async () => {
    server.enqueue('groq-reasoning.json');
    const completion = await provider({ model: 'qwen/qwen3-32b' }).complete({ messages: ask() });
    expect(reasoningText(completion.reasoning ?? [])).toBe(recordedMessage('groq-reasoning.json')['reasoning']);
    expect(completion.text).toMatch(/^The word "strawberry" contains \*\*3\*\*/);
  });

  it('reads a Mistral tool call (no `type` on the call) and a Mistral stream with usage on its finishing chunk', async () => {
    server.enqueue('mistral-tool-call.json', 'mistral-text-stream.sse');
    const completion = await provider({ model: 'mistral-small-latest' }).complete({ messages: ask() });
    expect(completion.toolCalls).toEqual([{ id: 'gSIMJiOkT', name: 'weather', arguments: '{"location": "San Francisco"}' }]);
    expect(completion.usage).toEqual({ promptTokens: 124, completionTokens: 22, totalTokens: 146 });
    const { completion: text } = await streamed({ messages: ask() }, { model: 'mistral-small-latest' });
    expect(text.text).toBe('Hello, world! This is a test response.');
    expect(text.usage).toEqual({ promptTokens: 13, completionTokens: 8, totalTokens: 21 });
  });
});

describe('Mistral reasoning (content as parts)', () => {
  const recordedThinking = () => {
    const body = JSON.parse(fixtureText('mistral-thinking.json')) as { choices: { message: { content: { type: string; thinking?: { text: string }[] }[] } }[] };
    return body.choices[0]?.message.content.find((part) => part.type === 'thinking')?.thinking?.[0]?.text;
  };

  it('reads the answer from the text part and the thinking part as reasoning', async () => {
    server.enqueue('mistral-thinking.json');
    const completion = await provider({ model: 'mistral-small-latest' }).complete({ messages: ask('What is 17 * 23?') });
    expect(completion.text).toBe('391');
    expect(reasoningText(completion.reasoning ?? [])).toBe(recordedThinking());
    expect(completion.usage).toEqual({ promptTokens: 28, completionTokens: 94, totalTokens: 122 });
  });

  it('streams the thinking parts as reasoning deltas and the text parts as text deltas', async () => {
    server.enqueue('mistral-thinking-stream.sse');
    const { events, completion } = await streamed({ messages: ask('What is 17 * 23?') }, { model: 'mistral-small-latest' });
    expect(deltas(events, 'text.delta')).toBe('391');
    expect(completion.text).toBe('391');
    expect(deltas(events, 'reasoning.delta')).toMatch(/^Okay, the user is asking for the product of 17 and 23\./);
    expect(deltas(events, 'reasoning.delta')).toMatch(/17 \* 23 = 391\.$/);
    expect(reasoningText(completion.reasoning ?? [])).toBe(deltas(events, 'reasoning.delta'));
    expect(completion.usage).toEqual({ promptTokens: 28, completionTokens: 139, totalTokens: 167 });
  });
});

describe('local servers', () => {
  it('estimates usage, marked estimated, for an Ollama stream that reports none', async () => {
    server.enqueue('ollama-one-chunk-stream.sse');
    const messages = ask('Weather in Paris?');
    const { completion } = await streamed({ messages }, { model: 'mistral-small' });
    expect(completion.text).toMatch(/^Thank you for the information\./);
    const promptTokens = estimateTokens(messages);
    const completionTokens = Math.ceil((completion.text ?? '').length / 4);
    expect(completion.usage).toEqual({ promptTokens, completionTokens, totalTokens: promptTokens + completionTokens, estimated: true });
  });

  it('keeps parallel calls apart when Ollama streams each at index 0 under its own id', async () => {
    server.enqueue('ollama-parallel-calls-index-0-stream.sse');
    const { completion } = await streamed({ messages: ask('Create hello.py and world.py') }, { model: 'qwen2.5-coder:7b' });
    expect(completion.finishReason).toBe('tool_calls');
    expect(completion.toolCalls).toEqual([
      { id: 'call_hk81qg8b', name: 'file_write', arguments: '{"filePath":"hello.py","content":"print(\\"hello\\")"}' },
      { id: 'call_rk2xye1l', name: 'file_write', arguments: '{"filePath":"world.py","content":"print(\\"world\\")"}' },
    ]);
  });

  it.each([
    ['vLLM before 0.10.1 (flat error body)', 'vllm-context-length-flat.json', "maximum context length is 4096 tokens", { limitTokens: 4096, promptTokens: 6029, completionTokens: 350 }],
    ['vLLM 0.10.1+ (nested error body)', 'vllm-context-length-nested.json', 'maximum context length is 16384 tokens', { limitTokens: 16384, promptTokens: 112946, completionTokens: 10000 }],
    ['llama.cpp', 'llamacpp-context-size.json', 'exceeds the available context size', { limitTokens: 8192, promptTokens: 14429, completionTokens: undefined }],
    ['llama.cpp (sent as a 500)', 'llamacpp-context-size-500.json', 'exceeds the available context size', { limitTokens: 256, promptTokens: 1407, completionTokens: undefined }],
    ['Ollama (the error a plain string)', 'ollama-context-length.json', 'the input length exceeds the context length', { limitTokens: undefined, promptTokens: undefined, completionTokens: undefined }],
    ['Gemini (the error in an array)', 'gemini-context-length.json', 'The input token count (314175) exceeds the maximum number of tokens allowed (131072)', { limitTokens: 131072, promptTokens: 314175, completionTokens: undefined }],
  ])('types the context-length error of %s, in the server\'s own words, with the sizes it states', async (_server, fixture, words, sizes) => {
    server.enqueue(fixture);
    const error = await failure(provider({ model: 'local' }).complete({ messages: ask() }));
    expect(error).toBeInstanceOf(ContextLengthError);
    expect((error as ContextLengthError).message).toContain(words);
    // The server's words, not the body's JSON around them.
    expect((error as ContextLengthError).message).not.toContain('{');
    const { limitTokens, promptTokens, completionTokens } = error as ContextLengthError;
    expect({ limitTokens, promptTokens, completionTokens }).toEqual(sizes);
    expect((error as ContextLengthError).retryable).toBe(false);
    expect(server.requests).toHaveLength(1);
  });
});

describe('OpenRouter', () => {
  it("keeps the upstream provider's reason from error.metadata.raw in the typed error", async () => {
    server.enqueue('openrouter-provider-error.json');
    const error = await failure(provider({ model: 'openai/gpt-4o' }).complete({ messages: ask() }));
    expect(error).toMatchObject({ code: 'bad_request' });
    const typed = error as InferenceError;
    expect(typed.upstream).toEqual({
      provider: 'OpenAI',
      message: "Response input messages must contain the word 'json' in some form to use 'text.format' of type 'json_object'.",
    });
    expect(typed.message).toContain("must contain the word 'json'");
    expect(typed.toJSON().upstream?.provider).toBe('OpenAI');
  });

  it('names DeepSeek as the upstream of a relayed thinking-mode 400', async () => {
    server.enqueue('openrouter-deepseek-reasoning-missing.json');
    const error = await failure(provider({ model: 'deepseek/deepseek-v3.2' }).complete({ messages: ask() }));
    expect(error).toMatchObject({ code: 'bad_request' });
    expect((error as InferenceError).upstream).toEqual({
      provider: 'DeepSeek',
      message: 'The `reasoning_content` in the thinking mode must be passed back to the API.',
    });
  });
});
