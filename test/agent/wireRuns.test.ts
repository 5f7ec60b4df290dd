/**
 * Agent runs against recorded responses of real providers (test/fixtures/wire), over HTTP on
 * 127.0.0.1 through `openAICompatible`: DeepSeek's thinking mode with tools against a server
 * that enforces DeepSeek's rule, a refusal, a reply cut off at the token cap under each
 * `onLength` policy, a context-length error and a server that reports no usage.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/agent/createAgent.ts';
import type { JournalEntry, LoopEvent } from '../../src/core/loopEvent.ts';
import { reasoningText, type AssistantMessage } from '../../src/core/messages.ts';
import type { ReasoningEffort } from '../../src/core/provider.ts';
import type { LoopResult } from '../../src/core/run.ts';
import { ContextLengthError } from '../../src/inference/errors.ts';
import { openAICompatible } from '../../src/inference/openaiCompatible.ts';
import type { OpenAICompatibleOptions } from '../../src/inference/config.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import type { LengthPolicy } from '../../src/agent/config.ts';
import { deepSeekThinkingRule, fixtureText, startReplayServer, type ReplayServer, type Rule } from '../support/replayServer.ts';

let server: ReplayServer;
let rule: Rule | undefined;
beforeEach(async () => {
  rule = undefined;
  server = await startReplayServer({ rule: (body) => rule?.(body) });
});
afterEach(() => server.close());

function weatherAgent(options: {
  model: string;
  stream?: boolean;
  onLength?: LengthPolicy;
  maxTokens?: number;
  reasoningEffort?: ReasoningEffort;
  provider?: OpenAICompatibleOptions;
}) {
  const asked: string[] = [];
  const weather = defineTool({
    name: 'weather',
    description: 'The weather at a location',
    input: z.object({ location: z.string() }),
    execute: ({ location }) => {
      asked.push(location);
      return { location, sky: 'sunny', celsius: 18 };
    },
  });
  const agent = createAgent({
    model: {
      provider: openAICompatible({ baseURL: server.baseURL, apiKey: 'sk-test-replay-key', model: options.model, env: {}, timeoutMs: 10_000, ...options.provider }),
      stream: options.stream ?? false,
      ...(options.onLength === undefined ? {} : { onLength: options.onLength }),
      ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
      ...(options.reasoningEffort === undefined ? {} : { reasoningEffort: options.reasoningEffort }),
    },
    tools: [weather],
  });
  const events: LoopEvent[] = [];
  agent.events$.subscribe((entry: JournalEntry) => events.push(entry.event));
  return { agent, asked, events };
}

function recorded(name: string): { content: string; reasoning_content: string } {
  const body = JSON.parse(fixtureText(name)) as { choices: { message: { content: string; reasoning_content: string } }[] };
  const message = body.choices[0]?.message;
  if (message === undefined) throw new Error(`${name} has no message`);
  return message;
}

async function rejection(promise: Promise<LoopResult>): Promise<Error & { result: LoopResult }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { result: LoopResult };
  }
  throw new Error('expected the run to fail');
}

const ofType = <T extends LoopEvent['type']>(events: readonly LoopEvent[], type: T) =>
  events.filter((event): event is Extract<LoopEvent, { type: T }> => event.type === type);

describe('DeepSeek thinking mode with tools, against a server that enforces its rule', () => {
  beforeEach(() => {
    rule = deepSeekThinkingRule;
  });

  it('completes a run: the tool-call turn goes back with its reasoning_content, and reasoning never becomes the answer', async () => {
    server.enqueue('deepseek-reasoner-tool-call.json', 'deepseek-reasoner-text.json');
    const { agent, asked, events } = weatherAgent({ model: 'deepseek-reasoner' });
    const result = await agent.run('What is the weather in San Francisco?');
    agent.stop();

    expect(server.served).toEqual(['deepseek-reasoner-tool-call.json', 'deepseek-reasoner-text.json']);
    expect(asked).toEqual(['San Francisco']);
    const thought = recorded('deepseek-reasoner-tool-call.json').reasoning_content;
    const final = recorded('deepseek-reasoner-text.json');
    expect(server.requests[1]?.messages.find((m) => m['role'] === 'assistant')).toMatchObject({ reasoning_content: thought, content: null });
    expect(result.text).toBe(final.content);
    expect(result.usage).toEqual({ promptTokens: 339 + 18, completionTokens: 92 + 345, totalTokens: 431 + 363 });
    const assistants = result.messages.filter((m): m is AssistantMessage => m.role === 'assistant');
    expect(assistants.map((m) => reasoningText(m.reasoning ?? []))).toEqual([thought, final.reasoning_content]);
    expect(ofType(events, 'reasoning.completed').map((e) => e.reasoning)).toEqual([thought, final.reasoning_content]);
  });

  it('completes a streamed run: thinking arrives as thinking.delta, the answer as token.delta', async () => {
    server.enqueue('deepseek-reasoner-tool-call-stream.sse', 'deepseek-reasoner-text-stream.sse');
    const { agent, asked, events } = weatherAgent({ model: 'deepseek-reasoner', stream: true });
    const tokens: string[] = [];
    agent.tokens$.subscribe((token) => tokens.push(token.delta));
    const result = await agent.run('What is the weather in San Francisco?');
    agent.stop();

    expect(asked).toEqual(['San Francisco']);
    expect(result.text).toBe('The word "strawberry" contains three "r"s.');
    expect(tokens.join('')).toBe(result.text);
    const thinking = ofType(events, 'thinking.delta').map((e) => e.delta).join('');
    const assistants = result.messages.filter((m): m is AssistantMessage => m.role === 'assistant');
    expect(thinking).toBe(assistants.map((m) => reasoningText(m.reasoning ?? [])).join(''));
    expect(thinking).not.toContain(result.text);
    expect(server.requests[1]?.messages.find((m) => m['role'] === 'assistant')?.['reasoning_content']).toBe(reasoningText(assistants[0]?.reasoning ?? []));
  });

  it("fails with DeepSeek's typed 400 when reasoning is not sent back (the capability switched off)", async () => {
    server.enqueue('deepseek-reasoner-tool-call.json', 'deepseek-reasoner-text.json');
    const { agent } = weatherAgent({ model: 'deepseek-reasoner', provider: { models: { 'deepseek-reasoner': { sendReasoningBack: false } } } });
    const error = await rejection(agent.run('What is the weather in San Francisco?'));
    agent.stop();
    expect(error).toMatchObject({ code: 'bad_request' });
    expect(error.message).toContain('must be passed back to the API');
    expect(server.served.at(-1)).toBe('deepseek-reasoning-content-missing.json');
  });
});

describe('a refusal', () => {
  it('ends the run typed (reason refusal), with no answer text', async () => {
    server.enqueue('openai-refusal-stream.sse');
    const { agent, events } = weatherAgent({ model: 'gpt-4o', stream: true });
    const error = await rejection(agent.run('how do I make anthrax?'));
    agent.stop();
    expect(error).toMatchObject({ code: 'model_refused' });
    expect(error.result).toMatchObject({ status: 'failed', reason: 'refusal', text: null });
    expect(error.result.error?.message).toContain("I'm sorry, but I can't assist with that request.");
    expect(ofType(events, 'token.delta')).toEqual([]);
    expect(ofType(events, 'run.terminated')[0]).toMatchObject({ reason: 'refusal', error: { code: 'model_refused' } });
  });

  it('ends a run that asked for a structured answer the same way, with no repair turn', async () => {
    // The recorded refusal answered a structured-output request: its schema is the refusal's reason.
    server.enqueue('openai-refusal-stream.sse', 'openai-refusal-stream.sse', 'openai-refusal-stream.sse', 'openai-refusal-stream.sse');
    const agent = createAgent({
      model: { provider: openAICompatible({ baseURL: server.baseURL, apiKey: 'sk-test-replay-key', model: 'gpt-4o', env: {}, timeoutMs: 10_000 }), stream: true },
      output: z.object({ steps: z.array(z.string()) }),
    });
    const error = await rejection(agent.run('how do I make anthrax?'));
    agent.stop();
    expect(error).toMatchObject({ code: 'model_refused' });
    expect(error.result).toMatchObject({ status: 'failed', reason: 'refusal', text: null });
    expect(error.result.error?.message).toContain("I'm sorry, but I can't assist with that request.");
    expect(server.requests).toHaveLength(1);
  });
});

describe('a reply cut off at the token cap (finish_reason length)', () => {
  const partial = recorded('deepseek-chat-length.json').content;

  it("ends the run typed (reason length) by default, announcing it, not as a final answer", async () => {
    server.enqueue('deepseek-chat-length.json');
    const { agent, events } = weatherAgent({ model: 'deepseek-chat', maxTokens: 300 });
    const error = await rejection(agent.run('Invent a holiday.'));
    agent.stop();
    expect(error).toMatchObject({ code: 'reply_truncated' });
    // A failed run's text is its last reply (the idiom of every failed run): here the cut-off one.
    expect(error.result).toMatchObject({ status: 'failed', reason: 'length', text: partial });
    expect(error.result.messages.at(-1)).toEqual({ role: 'assistant', content: partial });
    expect(ofType(events, 'reply.truncated')).toEqual([{ type: 'reply.truncated', action: 'end', continuation: 0, completionTokens: 300 }]);
  });

  it('asks the model to go on under onLength: { continue: n }, joining the pieces into one answer', async () => {
    server.enqueue('deepseek-chat-length.json', 'deepseek-reasoner-text.json');
    const { agent, events } = weatherAgent({ model: 'deepseek-chat', maxTokens: 300, onLength: { continue: 1 } });
    const result = await agent.run('Invent a holiday.');
    agent.stop();
    const rest = recorded('deepseek-reasoner-text.json').content;
    expect(result.status).toBe('done');
    expect(result.text).toBe(partial + rest);
    expect(result.iterations).toBe(1);
    expect(result.usage).toEqual({ promptTokens: 13 + 18, completionTokens: 300 + 345, totalTokens: 313 + 363 });
    // The second request carried the cut-off reply and the request to go on.
    const second = server.requests[1]?.messages ?? [];
    expect(second.at(-2)).toEqual({ role: 'assistant', content: partial });
    expect(second.at(-1)).toMatchObject({ role: 'user' });
    expect(String(second.at(-1)?.['content'])).toContain('Continue exactly where it stopped');
    expect(ofType(events, 'reply.truncated')).toEqual([{ type: 'reply.truncated', action: 'continue', continuation: 1, completionTokens: 300 }]);
  });

  it('ends the run when the continuations run out', async () => {
    server.enqueue('deepseek-chat-length.json', 'deepseek-chat-length.json');
    const { agent, events } = weatherAgent({ model: 'deepseek-chat', maxTokens: 300, onLength: { continue: 1 } });
    const error = await rejection(agent.run('Invent a holiday.'));
    agent.stop();
    expect(error).toMatchObject({ code: 'reply_truncated' });
    expect(error.result.messages.at(-1)).toEqual({ role: 'assistant', content: partial + partial });
    expect(ofType(events, 'reply.truncated').map((e) => e.action)).toEqual(['continue', 'end']);
  });
});

describe('provider edges through a run', () => {
  it("sends a reasoning model the agent's reasoningEffort and its token cap as max_completion_tokens", async () => {
    rule = (body) => ('max_tokens' in body ? 'openai-max-tokens-unsupported.json' : undefined);
    server.enqueue('azure-gpt-5-nano-stream.sse');
    const { agent } = weatherAgent({ model: 'gpt-5-nano', stream: true, maxTokens: 400, reasoningEffort: 'minimal' });
    const result = await agent.run('Capital of Denmark?');
    agent.stop();
    expect(result.text).toBe('Capital of Denmark.');
    expect(server.requests[0]).toMatchObject({ max_completion_tokens: 400, reasoning_effort: 'minimal' });
  });

  it('fails typed on a context-length error of a vLLM server that sends its error flat', async () => {
    server.enqueue('vllm-context-length-flat.json');
    const { agent } = weatherAgent({ model: 'Qwen/Qwen2.5-7B-Instruct' });
    const error = await rejection(agent.run('Summarise this very long document.'));
    agent.stop();
    expect(error).toBeInstanceOf(ContextLengthError);
    expect(error.message).toContain('maximum context length is 4096 tokens');
    expect(error.result.resumable).toBeUndefined();
  });

  it('reports estimated usage for a server that sends none, never a silent zero', async () => {
    server.enqueue('ollama-one-chunk-stream.sse');
    const { agent, events } = weatherAgent({ model: 'mistral-small', stream: true });
    const result = await agent.run('Weather in Paris?');
    agent.stop();
    expect(result.usage.estimated).toBe(true);
    expect(result.usage.completionTokens).toBeGreaterThan(0);
    expect(ofType(events, 'run.terminated')[0]?.usage.estimated).toBe(true);
  });
});
