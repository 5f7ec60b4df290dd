import { describe, expect, it } from 'vitest';
import { toOpenAIMessage, toOpenAIMessages } from '../../src/conversation/openai.ts';
import type { Message } from '../../src/core/messages.ts';

describe('toOpenAIMessages', () => {
  it('maps system, user and plain assistant messages one to one', () => {
    const input: Message[] = [
      { role: 'system', content: 's' },
      { role: 'user', content: 'u' },
      { role: 'assistant', content: 'a' },
    ];
    expect(toOpenAIMessages(input)).toEqual([
      { role: 'system', content: 's' },
      { role: 'user', content: 'u' },
      { role: 'assistant', content: 'a' },
    ]);
  });

  it('serialises tool calls as function tool_calls with the raw argument string and null content', () => {
    const out = toOpenAIMessage({
      role: 'assistant',
      content: null,
      toolCalls: [
        { id: 'c1', name: 'add', arguments: '{"a":1}' },
        { id: 'c2', name: 'search', arguments: '{"q": broken' },
      ],
    });
    expect(out).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'add', arguments: '{"a":1}' } },
        { id: 'c2', type: 'function', function: { name: 'search', arguments: '{"q": broken' } },
      ],
    });
  });

  it('keeps text next to tool calls', () => {
    const out = toOpenAIMessage({ role: 'assistant', content: 'Let me add.', toolCalls: [{ id: 'c1', name: 'add', arguments: '{}' }] });
    expect(out).toMatchObject({ role: 'assistant', content: 'Let me add.', tool_calls: [{ id: 'c1' }] });
  });

  it('sends null content without tool calls as an empty string', () => {
    expect(toOpenAIMessage({ role: 'assistant', content: null })).toEqual({ role: 'assistant', content: '' });
    expect(toOpenAIMessage({ role: 'assistant', content: null, toolCalls: [] })).toEqual({ role: 'assistant', content: '' });
  });

  it('serialises tool results with tool_call_id and drops the fields OpenAI does not take', () => {
    expect(toOpenAIMessage({ role: 'tool', toolCallId: 'c1', name: 'add', content: 'oops', isError: true })).toEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: 'oops',
    });
  });

  it('keeps message order and length', () => {
    const input: Message[] = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'f', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'c1', content: 'r' },
      { role: 'assistant', content: 'done' },
    ];
    expect(toOpenAIMessages(input).map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });
});
