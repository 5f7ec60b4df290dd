/**
 * End to end over HTTP: an agent with three tools talks to a local OpenAI-compatible server
 * through `openAICompatible` with streaming on. The server's scripted SSE replies split tool
 * calls across chunks; the test asserts every request the server received, byte for byte as
 * JSON, and the text that `tokens$` delivered.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/agent/createAgent.ts';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import { openAICompatible } from '../../src/inference/openaiCompatible.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { reply, sseBytes, chunksFor, startOpenAIServer, type OpenAIServer, type ReplySpec } from '../support/openaiServer.ts';

let server: OpenAIServer;
beforeAll(async () => {
  server = await startOpenAIServer();
});
afterAll(() => server.close());
beforeEach(() => server.reset());

const TEMPERATURES: Record<string, number> = { Zürich: 21, 東京: 27 };

function weatherTools(executed: string[]) {
  const weather = defineTool({
    name: 'get_weather',
    description: 'Current temperature of a city in °C',
    input: z.object({ city: z.string() }),
    execute: ({ city }) => {
      executed.push(`get_weather(${city})`);
      return { city, celsius: TEMPERATURES[city] ?? null };
    },
  });
  const convert = defineTool({
    name: 'to_fahrenheit',
    description: 'Convert °C to °F',
    input: z.object({ celsius: z.number() }),
    execute: ({ celsius }) => {
      executed.push(`to_fahrenheit(${celsius})`);
      return Math.round((celsius * 1.8 + 32) * 10) / 10;
    },
  });
  const add = defineTool({
    name: 'add',
    description: 'Add two numbers',
    input: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => {
      executed.push(`add(${a},${b})`);
      return a + b;
    },
  });
  return [weather, convert, add];
}

/** Cut a reply's SSE bytes every `step` bytes, so JSON, UTF-8 sequences and events split anywhere. */
function everyNBytes(spec: ReplySpec, step: number): number[] {
  const length = sseBytes(chunksFor(spec)).length;
  return Array.from({ length: Math.floor(length / step) }, (_, i) => (i + 1) * step);
}

const FIRST: ReplySpec = {
  textPieces: ['Let me ', 'check ', 'both cities.'],
  toolCalls: [
    { id: 'call_zrh', name: 'get_weather', argumentPieces: ['{"ci', 'ty": "Zü', 'rich"}'] },
    { id: 'call_tyo', name: 'get_weather', argumentPieces: ['{"city"', ':"東', '京"}'] },
  ],
  usage: { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 },
};
const SECOND: ReplySpec = {
  toolCalls: [{ id: 'call_f', name: 'to_fahrenheit', argumentPieces: ['{"cel', 'sius":', ' 21}'] }],
  usage: { prompt_tokens: 90, completion_tokens: 10, total_tokens: 100 },
};
const FINAL_TEXT = ['Zürich is 21 °C ', '(69.8 °F); ', '東京 is 27 °C. 🌤'];
const THIRD: ReplySpec = { textPieces: FINAL_TEXT, usage: { prompt_tokens: 120, completion_tokens: 15, total_tokens: 135 } };

describe('agent over HTTP with a streaming OpenAI-compatible server', () => {
  it('runs reason → tools → reason → tools → answer, sending exactly the expected requests', async () => {
    server.enqueue(reply.stream(FIRST, everyNBytes(FIRST, 61)), reply.stream(SECOND, everyNBytes(SECOND, 37)), reply.stream(THIRD, everyNBytes(THIRD, 29)));
    const executed: string[] = [];
    const agent = createAgent({
      model: {
        provider: openAICompatible({ baseURL: server.baseURL, apiKey: 'test', model: 'gpt-4o-mini', env: {}, timeoutMs: 5_000 }),
        stream: true,
        temperature: 0,
      },
      system: 'You are a weather assistant.',
      tools: weatherTools(executed),
    });
    const tokens: string[] = [];
    agent.tokens$.subscribe((t) => tokens.push(t.delta));
    const entries: JournalEntry[] = [];
    agent.events$.subscribe((e) => entries.push(e));

    const result = await agent.run('Weather in Zürich (also in °F) and 東京?');
    agent.stop();

    expect(result.text).toBe(FINAL_TEXT.join(''));
    expect(result.iterations).toBe(3);
    expect(result.usage).toEqual({ promptTokens: 260, completionTokens: 45, totalTokens: 305 });
    expect(executed).toEqual(['get_weather(Zürich)', 'get_weather(東京)', 'to_fahrenheit(21)']);
    // tokens$ carried every turn's streamed text in order, each word let out once complete (redaction sees across deltas).
    expect(tokens).toEqual(['Let me ', 'check ', 'both ', 'cities.', 'Zürich is 21 °C ', '(69.8 °F); ', '東京 is 27 °C. ', '🌤']);
    expect(tokens.join('')).toBe([...(FIRST.textPieces ?? []), ...FINAL_TEXT].join(''));
    expect(entries.filter((e) => e.event.type === 'token.delta').length).toBe(tokens.length);

    const tools = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Current temperature of a city in °C',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
        },
      },
      {
        type: 'function',
        function: {
          name: 'to_fahrenheit',
          description: 'Convert °C to °F',
          parameters: { type: 'object', properties: { celsius: { type: 'number' } }, required: ['celsius'], additionalProperties: false },
        },
      },
      {
        type: 'function',
        function: {
          name: 'add',
          description: 'Add two numbers',
          parameters: {
            type: 'object',
            properties: { a: { type: 'number' }, b: { type: 'number' } },
            required: ['a', 'b'],
            additionalProperties: false,
          },
        },
      },
    ];
    const system = { role: 'system', content: 'You are a weather assistant.' };
    const user = { role: 'user', content: 'Weather in Zürich (also in °F) and 東京?' };
    const firstAssistant = {
      role: 'assistant',
      content: 'Let me check both cities.',
      tool_calls: [
        { id: 'call_zrh', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Zürich"}' } },
        { id: 'call_tyo', type: 'function', function: { name: 'get_weather', arguments: '{"city":"東京"}' } },
      ],
    };
    const firstResults = [
      { role: 'tool', tool_call_id: 'call_zrh', content: '{"city":"Zürich","celsius":21}' },
      { role: 'tool', tool_call_id: 'call_tyo', content: '{"city":"東京","celsius":27}' },
    ];
    const secondAssistant = {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_f', type: 'function', function: { name: 'to_fahrenheit', arguments: '{"celsius": 21}' } }],
    };
    const secondResults = [{ role: 'tool', tool_call_id: 'call_f', content: '69.8' }];
    const body = (messages: unknown[]) => ({
      model: 'gpt-4o-mini',
      messages,
      tools,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });

    expect(server.requests.map((r) => [r.method, r.path])).toEqual([
      ['POST', '/v1/chat/completions'],
      ['POST', '/v1/chat/completions'],
      ['POST', '/v1/chat/completions'],
    ]);
    expect(server.requests[0]?.body).toEqual(body([system, user]));
    expect(server.requests[1]?.body).toEqual(body([system, user, firstAssistant, ...firstResults]));
    expect(server.requests[2]?.body).toEqual(body([system, user, firstAssistant, ...firstResults, secondAssistant, ...secondResults]));
    expect(server.requests[0]?.headers.authorization).toBe('Bearer test');
    expect(server.requests[0]?.headers.accept).toContain('application/json');
  });

  it('feeds a malformed streamed tool call back as an observation and never executes it', async () => {
    const broken: ReplySpec = { toolCalls: [{ id: 'call_bad', name: 'add', argumentPieces: ['{"a": 1, ', '"b": "two"}'] }] };
    server.enqueue(reply.stream(broken, everyNBytes(broken, 41)), reply.stream({ textPieces: ['Sorry.'] }));
    const executed: string[] = [];
    const agent = createAgent({
      model: {
        provider: openAICompatible({ baseURL: server.baseURL, apiKey: 'test', model: 'gpt-4o-mini', env: {}, timeoutMs: 5_000 }),
        stream: true,
      },
      tools: weatherTools(executed),
    });
    const result = await agent.run('add 1 and two');
    agent.stop();
    expect(result.text).toBe('Sorry.');
    expect(executed).toEqual([]);
    const second = server.requests[1]?.body as { messages: Array<{ role: string; tool_call_id?: string; content: string }> };
    const observation = second.messages.at(-1);
    expect(observation).toMatchObject({ role: 'tool', tool_call_id: 'call_bad' });
    expect(observation?.content).toContain('- b: Invalid input: expected number, received string');
  });
});
