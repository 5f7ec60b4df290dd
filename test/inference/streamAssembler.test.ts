import { describe, expect, it } from 'vitest';
import { StreamAssembler } from '../../src/inference/index.ts';

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) => ({
  model: 'm-1',
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...extra,
});
const call = (index: number | undefined, fields: { id?: string; name?: string; args?: string }) => ({
  tool_calls: [
    {
      ...(index === undefined ? {} : { index }),
      ...(fields.id === undefined ? {} : { id: fields.id }),
      function: { ...(fields.name === undefined ? {} : { name: fields.name }), arguments: fields.args ?? '' },
    },
  ],
});

describe('StreamAssembler', () => {
  it('joins text and argument fragments per index, even when calls interleave', () => {
    const assembler = new StreamAssembler('requested');
    assembler.push(chunk({ role: 'assistant', content: '' }));
    assembler.push(chunk({ content: 'Che' }));
    assembler.push(chunk({ content: 'cking' }));
    assembler.push(chunk(call(0, { id: 'a', name: 'weather', args: '{"ci' })));
    assembler.push(chunk(call(1, { id: 'b', name: 'time', args: '{"tz":' })));
    assembler.push(chunk(call(0, { args: 'ty":"Bern"}' })));
    assembler.push(chunk(call(1, { args: '"CET"}' })));
    assembler.push(chunk({}, 'tool_calls'));
    assembler.push({ model: 'm-1', choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } });
    expect(assembler.finish()).toEqual({
      text: 'Checking',
      refusal: null,
      reasoning: null,
      toolCalls: [
        { id: 'a', name: 'weather', arguments: '{"city":"Bern"}' },
        { id: 'b', name: 'time', arguments: '{"tz":"CET"}' },
      ],
      finishReason: 'tool_calls',
      usage: { promptTokens: 3, completionTokens: 4, totalTokens: 7 },
      model: 'm-1',
    });
  });

  it('emits id and name only with the first delta of a call, even when a server repeats them', () => {
    const assembler = new StreamAssembler('m');
    expect(assembler.push(chunk(call(0, { id: 'a', name: 'add', args: '{' })))).toEqual([
      { type: 'toolcall.delta', index: 0, id: 'a', name: 'add', argumentsDelta: '{' },
    ]);
    expect(assembler.push(chunk(call(0, { id: 'a', name: 'add', args: '}' })))).toEqual([{ type: 'toolcall.delta', index: 0, argumentsDelta: '}' }]);
    assembler.push(chunk({}, 'tool_calls'));
    expect(assembler.finish().toolCalls).toEqual([{ id: 'a', name: 'add', arguments: '{}' }]);
  });

  it('copes with servers that omit the index or the id', () => {
    const assembler = new StreamAssembler('m');
    assembler.push(chunk(call(undefined, { id: 'x', name: 'one', args: '{"a"' })));
    assembler.push(chunk(call(undefined, { args: ':1}' })));
    assembler.push(chunk(call(undefined, { id: 'y', name: 'two', args: '{}' })));
    assembler.push(chunk(call(2, { name: 'three', args: '{}' })));
    assembler.push(chunk({}, 'tool_calls'));
    expect(assembler.finish().toolCalls).toEqual([
      { id: 'x', name: 'one', arguments: '{"a":1}' },
      { id: 'y', name: 'two', arguments: '{}' },
      { id: 'call_2', name: 'three', arguments: '{}' },
    ]);
  });

  it('starts a new call when a different id and a name arrive at an index already taken, and continues it by that index', () => {
    const assembler = new StreamAssembler('m');
    assembler.push(chunk(call(0, { id: 'a', name: 'read', args: '{"p":' })));
    assembler.push(chunk(call(0, { args: '"x"}' })));
    expect(assembler.push(chunk(call(0, { id: 'b', name: 'read', args: '{"p":' })))).toEqual([
      { type: 'toolcall.delta', index: 1, id: 'b', name: 'read', argumentsDelta: '{"p":' },
    ]);
    assembler.push(chunk(call(0, { id: 'b', args: '"y"}' })));
    assembler.push(chunk({}, 'tool_calls'));
    expect(assembler.finish().toolCalls).toEqual([
      { id: 'a', name: 'read', arguments: '{"p":"x"}' },
      { id: 'b', name: 'read', arguments: '{"p":"y"}' },
    ]);
  });

  it('continues a call whose later pieces come under another id and no name (Poolside), at the same index', () => {
    const assembler = new StreamAssembler('m');
    assembler.push(chunk(call(0, { id: 'first', name: 'read', args: '' })));
    assembler.push(chunk(call(0, { id: 'second', args: '{"p":' })));
    assembler.push(chunk(call(0, { id: 'second', args: '"x"}' })));
    assembler.push(chunk({}, 'tool_calls'));
    expect(assembler.finish().toolCalls).toEqual([{ id: 'first', name: 'read', arguments: '{"p":"x"}' }]);
  });

  it('refuses to finish without a finish reason, dropping partial tool calls', () => {
    const assembler = new StreamAssembler('m');
    assembler.push(chunk(call(0, { id: 'a', name: 'delete_file', args: '{"path":"/tm' })));
    expect(() => assembler.finish()).toThrow(expect.objectContaining({ code: 'stream_interrupted' }));
    try {
      assembler.finish();
    } catch (error) {
      expect(error).toMatchObject({ retryable: false });
      expect((error as Error).message).toContain('delete_file');
    }
  });

  it('marks an interruption retryable only when nothing was emitted', () => {
    const assembler = new StreamAssembler('m');
    assembler.push(chunk({ role: 'assistant', content: '' }));
    expect(assembler.emitted).toBe(0);
    expect(() => assembler.finish()).toThrow(expect.objectContaining({ retryable: true }));
  });

  it('ignores other choices and rejects chunks that are not chat-completion chunks', () => {
    const assembler = new StreamAssembler('m');
    expect(assembler.push({ choices: [{ index: 1, delta: { content: 'other' }, finish_reason: null }] })).toEqual([]);
    expect(() => assembler.push({ choices: 'nope' })).toThrow(expect.objectContaining({ code: 'invalid_response' }));
    expect(() => assembler.push('text')).toThrow(expect.objectContaining({ code: 'invalid_response' }));
  });

  it('maps unknown finish reasons to other and keeps the requested model when none is reported', () => {
    const assembler = new StreamAssembler('requested');
    assembler.push({ choices: [{ index: 0, delta: { content: 'x' }, finish_reason: 'eos_token' }] });
    expect(assembler.finish()).toMatchObject({ finishReason: 'other', model: 'requested', text: 'x' });
  });
});
