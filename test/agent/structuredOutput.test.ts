/**
 * `createAgent({ output })`: the final answer is validated against a zod schema and typed from
 * it. Over HTTP with the real `openai` client: an endpoint with structured output gets the
 * schema as `response_format`; one without gets a `final_answer` tool it must call. Either way a
 * mismatch goes back to the model as a repair turn, and running out of repair turns ends the
 * run with RunError (model_repair_exhausted).
 */
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { createAgent, type Agent } from '../../src/agent/createAgent.ts';
import type { LoopResult } from '../../src/core/run.ts';
import type { InferenceProvider } from '../../src/core/provider.ts';
import { openAICompatible } from '../../src/inference/openaiCompatible.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { reply, useOpenAIServer } from '../support/openaiServer.ts';
import type { RunError } from '../../src/agent/errors.ts';

const openai = useOpenAIServer();
const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
});

const Weather = z.object({ city: z.string(), celsius: z.number() });

function endpoint(structured: boolean): InferenceProvider {
  const provider = openAICompatible({ baseURL: openai().baseURL, apiKey: 'test', model: 'gpt-4o-mini', env: {}, timeoutMs: 10_000, retry: { maxRetries: 0 } });
  // An endpoint without structured output: the same client, declared without it.
  return structured ? provider : { ...provider, supportsStructuredOutput: false };
}

interface Body {
  messages: { role: string; content: unknown; tool_call_id?: string }[];
  tools?: { function: { name: string; parameters: unknown } }[];
  tool_choice?: unknown;
  response_format?: { type: string; json_schema: { name: string; schema: unknown; strict: boolean } };
}
const body = (index: number): Body => openai().requests[index]?.body as Body;

describe('a structured final answer, native structured output', () => {
  it('sends the schema as response_format, repairs a mismatch, and types result.output', async () => {
    openai().enqueue(reply.completion({ textPieces: ['{"city":"Paris","celsius":"warm"}'] }), reply.completion({ textPieces: ['{"city":"Paris","celsius":21}'] }));
    const agent = createAgent({ model: endpoint(true), output: Weather });
    agents.push(agent as Agent);
    const result = await agent.run('Weather in Paris?');

    expectTypeOf(result.output).toEqualTypeOf<{ city: string; celsius: number }>();
    expect(result.output).toEqual({ city: 'Paris', celsius: 21 });
    expect(result.text).toBe('{"city":"Paris","celsius":21}');
    expect(body(0).response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'final_answer', strict: true, schema: { type: 'object', required: ['city', 'celsius'] } } });
    expect(body(0).tools).toBeUndefined();
    // The repair turn: the rejected answer, then what was wrong with it.
    const second = body(1).messages;
    expect(second.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(second[1]?.content).toBe('{"city":"Paris","celsius":"warm"}');
    expect(second[2]?.content).toMatch(/does not match the required output schema \(celsius: .*\)/);
    expect(result.iterations).toBe(2);
  });

  it('lets tool calls through unchecked until the final reply', async () => {
    const lookups: string[] = [];
    const lookup = defineTool({
      name: 'lookup',
      description: 'Temperature of a city',
      input: z.object({ city: z.string() }),
      execute: ({ city }) => {
        lookups.push(city);
        return 21;
      },
    });
    openai().enqueue(
      reply.completion({ toolCalls: [{ id: 'c1', name: 'lookup', argumentPieces: ['{"city":"Paris"}'] }] }),
      reply.completion({ textPieces: ['{"city":"Paris","celsius":21}'] }),
    );
    const agent = createAgent({ model: endpoint(true), tools: [lookup], output: Weather });
    agents.push(agent as Agent);
    const result = await agent.run('Weather in Paris?');
    expect(lookups).toEqual(['Paris']);
    expect(result.output).toEqual({ city: 'Paris', celsius: 21 });
  });
});

describe('an output schema with optional fields, native structured output', () => {
  it('is sent as strict JSON Schema OpenAI accepts (every key required, optional ones nullable), and a null back is an absent field', async () => {
    const Report = z.object({
      city: z.string(),
      note: z.string().optional(),
      wind: z.object({ kmh: z.number(), gusts: z.number().optional() }).optional(),
      rain: z.number().nullable().optional(),
      alerts: z.array(z.object({ level: z.enum(['low', 'high']), until: z.string().optional() })),
    });
    openai().enqueue(reply.completion({ textPieces: ['{"city":"Paris","note":null,"wind":{"kmh":12,"gusts":null},"rain":null,"alerts":[{"level":"low","until":null}]}'] }));
    const agent = createAgent({ model: endpoint(true), output: Report });
    agents.push(agent as Agent);
    const result = await agent.run('Weather report for Paris?');
    expect(result.output).toEqual({ city: 'Paris', wind: { kmh: 12 }, rain: null, alerts: [{ level: 'low' }] });
    expect(openai().requests).toHaveLength(1);
    expect(body(0).response_format?.json_schema.schema).toEqual({
      type: 'object',
      properties: {
        city: { type: 'string' },
        note: { type: ['string', 'null'] },
        wind: {
          anyOf: [
            { type: 'object', properties: { kmh: { type: 'number' }, gusts: { type: ['number', 'null'] } }, required: ['kmh', 'gusts'], additionalProperties: false },
            { type: 'null' },
          ],
        },
        rain: { type: ['number', 'null'] },
        alerts: {
          type: 'array',
          items: { type: 'object', properties: { level: { type: 'string', enum: ['low', 'high'] }, until: { type: ['string', 'null'] } }, required: ['level', 'until'], additionalProperties: false },
        },
      },
      required: ['city', 'note', 'wind', 'rain', 'alerts'],
      additionalProperties: false,
    });
  });
});

describe('a structured final answer through the final_answer tool', () => {
  it('offers final_answer with the schema, requires a tool call, repairs bad arguments, and ends on a good call', async () => {
    openai().enqueue(
      reply.completion({ toolCalls: [{ id: 'f1', name: 'final_answer', argumentPieces: ['{"city":"Paris"}'] }] }),
      reply.completion({ toolCalls: [{ id: 'f2', name: 'final_answer', argumentPieces: ['{"city":"Paris","celsius":21}'] }] }),
    );
    const agent = createAgent({ model: endpoint(false), output: Weather });
    agents.push(agent as Agent);
    const result = await agent.run('Weather in Paris?');

    expect(result.output).toEqual({ city: 'Paris', celsius: 21 });
    expect(body(0).response_format).toBeUndefined();
    expect(body(0).tool_choice).toBe('required');
    expect(body(0).tools?.map((t) => t.function.name)).toEqual(['final_answer']);
    expect(body(0).tools?.[0]?.function.parameters).toMatchObject({ type: 'object', required: ['city', 'celsius'] });
    // The bad call is answered by its error, as a tool result.
    const repair = body(1).messages.at(-1);
    expect(repair).toMatchObject({ role: 'tool', tool_call_id: 'f1' });
    expect(String(repair?.content)).toMatch(/celsius/);
    // The conversation ends on the answer as text.
    expect(result.messages.at(-1)).toEqual({ role: 'assistant', content: '{"city":"Paris","celsius":21}' });
  });

  it('asks for the tool when the model answers in prose', async () => {
    openai().enqueue(reply.completion({ textPieces: ['It is 21 degrees in Paris.'] }), reply.completion({ toolCalls: [{ id: 'f1', name: 'final_answer', argumentPieces: ['{"city":"Paris","celsius":21}'] }] }));
    const agent = createAgent({ model: endpoint(false), output: Weather });
    agents.push(agent as Agent);
    const result = await agent.run('Weather in Paris?');
    expect(result.output).toEqual({ city: 'Paris', celsius: 21 });
    expect(body(1).messages.at(-1)).toMatchObject({ role: 'user', content: expect.stringContaining('Call the final_answer tool') });
  });
});

describe('with the scripted model', () => {
  it('behaves like the endpoint: a tool-calling turn is not held to the schema, a mismatch is repaired', async () => {
    const lookup = defineTool({ name: 'lookup', description: 'Temperature', input: z.object({ city: z.string() }), execute: () => 21 });
    const model = scriptedModel([{ toolCalls: [{ name: 'lookup', arguments: { city: 'Paris' } }] }, { output: { city: 'Paris' } }, { output: { city: 'Paris', celsius: 21 } }]);
    const agent = createAgent({ model, tools: [lookup], output: Weather });
    agents.push(agent as Agent);
    const result = await agent.run('Weather in Paris?');
    expect(result.output).toEqual({ city: 'Paris', celsius: 21 });
    expect(model.calls).toHaveLength(3);
    expect(model.calls[2]?.messages.at(-1)).toMatchObject({ role: 'user', content: expect.stringContaining('celsius') });
  });
});

describe('running out of repair turns', () => {
  it('ends the run with RunError (model_repair_exhausted) naming the schema problem', async () => {
    const bad = () => reply.completion({ textPieces: ['{"city":"Paris"}'] });
    openai().enqueue(bad(), bad(), bad());
    const agent = createAgent({ model: endpoint(true), output: Weather, limits: { maxRepairTurns: 1 } });
    agents.push(agent as Agent);
    const error = await agent.run('Weather in Paris?').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'model_repair_exhausted' });
    expect((error as Error).message).toMatch(/output schema/);
    expect((error as RunError).result).toMatchObject({ status: 'failed', reason: 'model_behavior', iterations: 2 });
    expect(openai().requests).toHaveLength(2);
  });
});

describe('a structured answer cut off at the token cap', () => {
  it('ends the run as reply_truncated (not as a schema mismatch) under the default onLength', async () => {
    const cut = () => reply.completion({ textPieces: ['{"city":"Par'], finishReason: 'length' });
    openai().enqueue(cut(), cut(), cut(), cut());
    const agent = createAgent({ model: { provider: endpoint(true), maxTokens: 5 }, output: Weather });
    agents.push(agent as Agent);
    const error = await agent.run('Weather in Paris?').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'reply_truncated' });
    expect((error as RunError).result).toMatchObject({ status: 'failed', reason: 'length', text: '{"city":"Par' });
    // No repair turn: asking again under the same cap would be cut off the same way.
    expect(openai().requests).toHaveLength(1);
  });

  it('continues a cut-off answer under onLength: { continue: n } and checks the joined text', async () => {
    openai().enqueue(
      reply.completion({ textPieces: ['{"city":"Par'], finishReason: 'length' }),
      reply.completion({ textPieces: ['is","celsius":21}'] }),
    );
    const agent = createAgent({ model: { provider: endpoint(true), maxTokens: 5, onLength: { continue: 1 } }, output: Weather });
    agents.push(agent as Agent);
    const result = await agent.run('Weather in Paris?');
    expect(result.output).toEqual({ city: 'Paris', celsius: 21 });
    expect(result.iterations).toBe(1);
    // The continuation goes on from the cut-off text: it is not itself held to the schema.
    expect(body(1).response_format).toBeUndefined();
    expect(body(1).messages.at(-2)).toMatchObject({ role: 'assistant', content: '{"city":"Par' });
  });
});

describe('types', () => {
  it('an agent without a schema runs to a plain LoopResult', () => {
    const plain = createAgent({ model: endpoint(true) });
    agents.push(plain);
    expectTypeOf<Awaited<ReturnType<typeof plain.run>>>().toEqualTypeOf<LoopResult>();
    const typed = createAgent({ model: endpoint(true), output: z.object({ ok: z.boolean() }) });
    agents.push(typed as Agent);
    expectTypeOf<Awaited<ReturnType<typeof typed.run>>['output']>().toEqualTypeOf<{ ok: boolean }>();
  });
});
