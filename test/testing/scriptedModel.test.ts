import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { z } from 'zod';
import { scriptedModel, type ScriptStep } from '../../src/testing/index.ts';
import type { Message } from '../../src/core/messages.ts';
import type { CompletionRequest, StreamEvent } from '../../src/core/provider.ts';
import { ConfigurationError } from '../../src/core/errors.ts';
import { StructuredOutputError } from '../../src/inference/errors.ts';

const messages: Message[] = [{ role: 'user', content: 'What is 1 + 2?' }]; // 14 chars

async function collect<T>(events: AsyncIterable<StreamEvent<T>>): Promise<StreamEvent<T>[]> {
  const out: StreamEvent<T>[] = [];
  for await (const event of events) out.push(event);
  return out;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('scriptedModel', () => {
  it('describes itself as a provider with native tools and structured output', () => {
    const model = scriptedModel([]);
    expect(model).toMatchObject({
      name: 'scripted',
      defaultModel: 'scripted-model',
      supportsNativeTools: true,
      supportsStructuredOutput: true,
    });
    expect(scriptedModel([], { supportsNativeTools: false, defaultModel: 'm' })).toMatchObject({
      supportsNativeTools: false,
      defaultModel: 'm',
    });
  });

  it('answers steps in script order and counts the remaining ones', async () => {
    const model = scriptedModel([{ text: 'one' }, { text: 'two' }]);
    expect(model.remaining).toBe(2);
    expect((await model.complete({ messages })).text).toBe('one');
    expect(model.remaining).toBe(1);
    expect((await model.complete({ messages })).text).toBe('two');
    expect(model.remaining).toBe(0);
  });

  it('asks a function script for each step, with the request and call index', async () => {
    const model = scriptedModel((request, callIndex) => ({ text: `#${callIndex}: ${request.messages.length}` }));
    expect((await model.complete({ messages })).text).toBe('#0: 1');
    expect((await model.complete({ messages: [...messages, { role: 'assistant', content: 'x' }] })).text).toBe('#1: 2');
    expect(model.remaining).toBe(Infinity);
  });

  it('gives tool calls deterministic ids, JSON arguments and the tool_calls finish reason', async () => {
    const model = scriptedModel([
      { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }, { id: 'mine', name: 'bad', arguments: '{"a":' }] },
      { toolCalls: [{ name: 'add', arguments: {} }] },
    ]);
    const first = await model.complete({ messages });
    expect(first.text).toBeNull();
    expect(first.finishReason).toBe('tool_calls');
    expect(first.toolCalls).toEqual([
      { id: 'call_0_0', name: 'add', arguments: '{"a":1,"b":2}' },
      { id: 'mine', name: 'bad', arguments: '{"a":' },
    ]);
    expect((await model.complete({ messages })).toolCalls[0]?.id).toBe('call_1_0');
  });

  it('estimates usage as chars/4 rounded up, and lets the step override it', async () => {
    const model = scriptedModel([
      { text: 'three' }, // 5 chars → 2 tokens
      { toolCalls: [{ name: 'add', arguments: '{"a":1}' }] }, // 3 + 7 chars → 3 tokens
      { text: 'x', usage: { completionTokens: 100 } },
    ]);
    expect((await model.complete({ messages })).usage).toEqual({ promptTokens: 4, completionTokens: 2, totalTokens: 6 });
    const withCall: Message[] = [
      ...messages,
      { role: 'assistant', content: null, toolCalls: [{ id: 'c', name: 'add', arguments: '{"a":1}' }] },
    ]; // 14 + 10 chars → 6 tokens
    expect((await model.complete({ messages: withCall })).usage).toEqual({ promptTokens: 6, completionTokens: 3, totalTokens: 9 });
    expect((await model.complete({ messages })).usage).toEqual({ promptTokens: 4, completionTokens: 100, totalTokens: 104 });
  });

  it('reports the requested model, or its default', async () => {
    const model = scriptedModel([{ text: 'a' }, { text: 'b' }]);
    expect((await model.complete({ messages, model: 'other' })).model).toBe('other');
    expect((await model.complete({ messages })).model).toBe('scripted-model');
  });

  it('returns structured output as JSON text and as the parsed, validated value', async () => {
    const schema = z.object({ answer: z.number() });
    const model = scriptedModel([{ output: { answer: 3 } }, { text: '{"answer":4}' }]);
    const first = await model.complete({ messages, output: { name: 'sum', schema } });
    expect(first.text).toBe('{"answer":3}');
    expect(first.output).toEqual({ answer: 3 });
    expect((await model.complete({ messages, output: { name: 'sum', schema } })).output).toEqual({ answer: 4 });
  });

  it('rejects structured output that does not match the schema', async () => {
    const schema = z.object({ answer: z.number() });
    const model = scriptedModel([{ output: { answer: 'three' } }, { text: 'not json' }]);
    await expect(model.complete({ messages, output: { name: 'sum', schema } })).rejects.toThrow(StructuredOutputError);
    await expect(model.complete({ messages, output: { name: 'sum', schema } })).rejects.toThrow(/not JSON/);
  });

  it('does not hold a tool-calling reply to the schema, and a mismatch carries the completion', async () => {
    const schema = z.object({ answer: z.number() });
    const model = scriptedModel([{ toolCalls: [{ name: 'add', arguments: { a: 1 } }] }, { output: { answer: 'three' } }]);
    const calling = await model.complete({ messages, output: { name: 'sum', schema } });
    expect(calling.toolCalls.map((call) => call.name)).toEqual(['add']);
    expect(calling.output).toBeUndefined();
    const error = await model.complete({ messages, output: { name: 'sum', schema } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StructuredOutputError);
    expect((error as StructuredOutputError).completion?.text).toBe('{"answer":"three"}');
  });

  it('throws an injected error, from an instance or a factory', async () => {
    const boom = new Error('boom');
    const model = scriptedModel([{ error: boom }, { error: () => new TypeError('fresh') }, { text: 'recovered' }]);
    await expect(model.complete({ messages })).rejects.toBe(boom);
    await expect(model.complete({ messages })).rejects.toThrow(TypeError);
    expect((await model.complete({ messages })).text).toBe('recovered');
  });

  it('throws ScriptedModelError (script_exhausted) saying how many steps the script had', async () => {
    const model = scriptedModel([{ text: 'only' }]);
    await model.complete({ messages });
    const error = await model.complete({ messages }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'script_exhausted' });
    expect(error).toMatchObject({ code: 'script_exhausted', steps: 1, callIndex: 1 });
    expect((error as Error).message).toContain('1 step');
  });

  it('ends a function script when it returns undefined', async () => {
    const model = scriptedModel((_request, i) => (i < 2 ? { text: 'ok' } : undefined));
    await model.complete({ messages });
    await model.complete({ messages });
    await expect(model.complete({ messages })).rejects.toMatchObject({ code: 'script_exhausted', steps: 2 });
  });

  it('records every request it got, by reference', async () => {
    const model = scriptedModel([{ text: 'a' }, { text: 'b' }]);
    const first: CompletionRequest = { messages };
    const second: CompletionRequest = { messages, temperature: 0 };
    await model.complete(first);
    await collect(model.stream(second));
    expect(model.calls).toHaveLength(2);
    expect(model.calls[0]).toBe(first);
    expect(model.calls[1]).toBe(second);
  });

  it('keeps counting steps but records nothing with recordCalls: false', async () => {
    const model = scriptedModel([{ text: 'a' }, { toolCalls: [{ name: 'f', arguments: {} }] }], { recordCalls: false });
    await model.complete({ messages });
    expect((await model.complete({ messages })).toolCalls[0]?.id).toBe('call_1_0');
    expect(model.calls).toHaveLength(0);
    expect(model.remaining).toBe(0);
  });

  it('answers without a timer when there is no delay', async () => {
    vi.useFakeTimers();
    const model = scriptedModel([{ text: 'instant' }]);
    let text: string | null | undefined;
    void model.complete({ messages }).then((c) => (text = c.text));
    expect(vi.getTimerCount()).toBe(0);
    // With fake timers never advanced, only a microtask-resolved promise can settle.
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(text).toBe('instant');
  });

  it('waits delayMs before answering', async () => {
    vi.useFakeTimers();
    const model = scriptedModel([{ text: 'late', delayMs: 1_000 }]);
    let settled = false;
    const pending = model.complete({ messages }).then((c) => {
      settled = true;
      return c;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect((await pending).text).toBe('late');
  });

  it('rejects promptly with the signal reason when aborted during the delay', async () => {
    vi.useFakeTimers();
    const model = scriptedModel([{ text: 'never', delayMs: 60_000 }]);
    const controller = new AbortController();
    const pending = model.complete({ messages, signal: controller.signal });
    await vi.advanceTimersByTimeAsync(10);
    const reason = new Error('cancelled');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(vi.getTimerCount()).toBe(0); // the delay timer was cleared
  });

  it('rejects at once on an already-aborted signal, without using a step', async () => {
    const model = scriptedModel([{ text: 'kept' }]);
    const controller = new AbortController();
    controller.abort(new Error('already'));
    await expect(model.complete({ messages, signal: controller.signal })).rejects.toThrow('already');
    await expect(collect(model.stream({ messages, signal: controller.signal }))).rejects.toThrow('already');
    expect(model.calls).toHaveLength(0);
    expect((await model.complete({ messages })).text).toBe('kept');
  });

  it('rejects chunks that do not spell the text', async () => {
    const model = scriptedModel([{ text: 'abc', chunks: ['a', 'b'] }]);
    await expect(model.complete({ messages })).rejects.toThrow(ConfigurationError);
  });
});

describe('scriptedModel stream', () => {
  const steps: ScriptStep[] = [
    { text: 'Let me add these.', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }, { name: 'noop', arguments: '' }] },
    { text: 'The answer is 3', chunks: ['The ans', 'wer is 3'] },
  ];

  it('ends with the same completion complete() returns', async () => {
    const completed = scriptedModel(steps);
    const streamed = scriptedModel(steps);
    for (let i = 0; i < steps.length; i++) {
      const expected = await completed.complete({ messages });
      const events = await collect(streamed.stream({ messages }));
      expect(events.at(-1)).toEqual({ type: 'done', completion: expected });
      expect(events.filter((e) => e.type === 'done')).toHaveLength(1);
    }
  });

  it('yields text in word pieces, or in the scripted chunks', async () => {
    const model = scriptedModel(steps);
    const text = (events: StreamEvent[]) => events.flatMap((e) => (e.type === 'text.delta' ? [e.delta] : []));
    expect(text(await collect(model.stream({ messages })))).toEqual(['Let ', 'me ', 'add ', 'these.']);
    expect(text(await collect(model.stream({ messages })))).toEqual(['The ans', 'wer is 3']);
  });

  it('opens each tool call with id and name, then sends its arguments in several fragments', async () => {
    const events = await collect(scriptedModel(steps).stream({ messages }));
    const deltas = events.flatMap((e) => (e.type === 'toolcall.delta' ? [e] : []));
    expect(deltas[0]).toEqual({ type: 'toolcall.delta', index: 0, id: 'call_0_0', name: 'add', argumentsDelta: '' });
    const first = deltas.filter((d) => d.index === 0).slice(1);
    expect(first.length).toBeGreaterThanOrEqual(2);
    expect(first.every((d) => d.id === undefined && d.name === undefined)).toBe(true);
    expect(first.map((d) => d.argumentsDelta).join('')).toBe('{"a":1,"b":2}');
    expect(deltas.filter((d) => d.index === 1)).toEqual([
      { type: 'toolcall.delta', index: 1, id: 'call_0_1', name: 'noop', argumentsDelta: '' },
    ]);
  });

  it('does not start streaming until the delay has passed', async () => {
    vi.useFakeTimers();
    const iterator = scriptedModel([{ text: 'slow', delayMs: 500 }]).stream({ messages })[Symbol.asyncIterator]();
    let first: IteratorResult<StreamEvent> | undefined;
    void iterator.next().then((r) => (first = r));
    await vi.advanceTimersByTimeAsync(499);
    expect(first).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(first?.value).toEqual({ type: 'text.delta', delta: 'slow' });
  });

  it('stops with the signal reason when aborted mid-stream', async () => {
    const controller = new AbortController();
    const model = scriptedModel([{ text: 'one two three four' }]);
    const seen: StreamEvent[] = [];
    const run = async () => {
      for await (const event of model.stream({ messages, signal: controller.signal })) {
        seen.push(event);
        if (seen.length === 2) controller.abort(new Error('stop'));
      }
    };
    await expect(run()).rejects.toThrow('stop');
    expect(seen).toHaveLength(2);
  });

  it('cuts the stream before done when the step says so', async () => {
    const model = scriptedModel([
      { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }], streamCut: { afterEvents: 2 } },
      { text: 'x y', streamCut: { afterEvents: 0, error: () => new Error('reset') } },
    ]);
    const seen: StreamEvent[] = [];
    const run = async () => {
      for await (const event of model.stream({ messages })) seen.push(event);
    };
    await expect(run()).rejects.toThrow(expect.objectContaining({ code: 'stream_cut' }));
    expect(seen).toHaveLength(2);
    expect(seen.some((e) => e.type === 'done')).toBe(false);
    await expect(collect(model.stream({ messages }))).rejects.toThrow('reset');
  });
});

describe('scriptedModel types', () => {
  it('types structured output from the schema', async () => {
    const model = scriptedModel([{ output: { n: 1 } }]);
    const completion = await model.complete({ messages, output: { name: 'n', schema: z.object({ n: z.number() }) } });
    expectTypeOf(completion.output).toEqualTypeOf<{ n: number } | undefined>();
    expect(completion.output?.n).toBe(1);
  });
});
