import { describe, expect, it } from 'vitest';
import { toAnthropicMessages, toToolUseInput } from '../../src/conversation/anthropic.ts';
import type { Message } from '../../src/core/messages.ts';

describe('toAnthropicMessages', () => {
  it('splits system messages out and joins them with a blank line', () => {
    const result = toAnthropicMessages([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
      { role: 'system', content: '[KNOWLEDGE_CONTEXT] x' },
    ]);
    expect(result).toEqual({ system: 'Be brief.\n\n[KNOWLEDGE_CONTEXT] x', messages: [{ role: 'user', content: 'hi' }] });
  });

  it('leaves system out when there is none', () => {
    expect(toAnthropicMessages([{ role: 'user', content: 'hi' }])).toEqual({ messages: [{ role: 'user', content: 'hi' }] });
  });

  it('turns tool calls into tool_use blocks after the text, with parsed input', () => {
    const { messages } = toAnthropicMessages([
      { role: 'user', content: 'add' },
      {
        role: 'assistant',
        content: 'Adding.',
        toolCalls: [{ id: 'c1', name: 'add', arguments: '{"a":1,"b":{"c":[2]}}' }],
      },
    ]);
    expect(messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Adding.' },
        { type: 'tool_use', id: 'c1', name: 'add', input: { a: 1, b: { c: [2] } } },
      ],
    });
  });

  it('omits the text block when the assistant content is null or empty', () => {
    const { messages } = toAnthropicMessages([
      { role: 'user', content: 'add' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'add', arguments: '{}' }] },
    ]);
    expect(messages[1]).toEqual({ role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'add', input: {} }] });
  });

  it('merges consecutive tool results into one user turn, with is_error only on failures', () => {
    const { messages } = toAnthropicMessages([
      { role: 'user', content: 'two sums' },
      {
        role: 'assistant',
        content: null,
        toolCalls: [
          { id: 'c1', name: 'add', arguments: '{}' },
          { id: 'c2', name: 'add', arguments: '{}' },
        ],
      },
      { role: 'tool', toolCallId: 'c1', name: 'add', content: '3' },
      { role: 'tool', toolCallId: 'c2', content: 'timeout', isError: true },
      { role: 'assistant', content: 'done' },
    ]);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'c1', content: '3' },
        { type: 'tool_result', tool_use_id: 'c2', content: 'timeout', is_error: true },
      ],
    });
    expect(messages[3]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'done' }] });
  });

  it('merges a user message that follows tool results into the same turn as a text block', () => {
    const { messages } = toAnthropicMessages([
      { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'a', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'c1', content: 'r' },
      { role: 'user', content: 'and then?' },
    ]);
    expect(messages).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'a', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c1', content: 'r' },
          { type: 'text', text: 'and then?' },
        ],
      },
    ]);
  });

  it('keeps tool results ahead of text when a result arrives after a user message', () => {
    const { messages } = toAnthropicMessages([
      { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'a', arguments: '{}' }] },
      { role: 'user', content: 'hurry' },
      { role: 'tool', toolCallId: 'c1', content: 'r' },
    ]);
    expect(messages[1]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'c1', content: 'r' },
        { type: 'text', text: 'hurry' },
      ],
    });
  });

  it('always alternates roles, merging consecutive user and assistant messages and dropping empty replies', () => {
    const input: Message[] = [
      { role: 'user', content: 'a' },
      { role: 'user', content: 'b' },
      { role: 'assistant', content: 'x' },
      { role: 'assistant', content: null },
      { role: 'assistant', content: 'y' },
    ];
    const { messages } = toAnthropicMessages(input);
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'x' }, { type: 'text', text: 'y' }] },
    ]);
  });

  it('preserves malformed arguments as _raw instead of losing them', () => {
    const { messages } = toAnthropicMessages([
      { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'add', arguments: '{"a": 1,' }] },
    ]);
    expect(messages[0]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'c1', name: 'add', input: { _raw: '{"a": 1,' } }],
    });
  });

  it('does not mutate its input', () => {
    const input: Message[] = [
      { role: 'user', content: 'a' },
      { role: 'user', content: 'b' },
    ];
    const copy = structuredClone(input);
    toAnthropicMessages(input);
    expect(input).toEqual(copy);
  });
});

describe('toToolUseInput', () => {
  it('parses a JSON object', () => {
    expect(toToolUseInput('{"q":"x"}')).toEqual({ q: 'x' });
  });

  it('treats empty arguments as no arguments', () => {
    expect(toToolUseInput('')).toEqual({});
    expect(toToolUseInput('  ')).toEqual({});
  });

  it('wraps prose, arrays and scalars in _raw, since input must be an object', () => {
    expect(toToolUseInput('add one and two')).toEqual({ _raw: 'add one and two' });
    expect(toToolUseInput('[1,2]')).toEqual({ _raw: '[1,2]' });
    expect(toToolUseInput('42')).toEqual({ _raw: '42' });
    expect(toToolUseInput('null')).toEqual({ _raw: 'null' });
  });
});

describe('toAnthropicMessages with reasoning', () => {
  it('puts signed thinking and redacted thinking first in the assistant turn, unchanged', () => {
    const { messages } = toAnthropicMessages([
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: 'Looking it up.',
        toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }],
        reasoning: [
          { type: 'thinking', text: 'I should look it up.', signature: 'EqSig==' },
          { type: 'redacted', data: 'EmRedacted==' },
        ],
      },
    ]);
    expect(messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should look it up.', signature: 'EqSig==' },
        { type: 'redacted_thinking', data: 'EmRedacted==' },
        { type: 'text', text: 'Looking it up.' },
        { type: 'tool_use', id: 'c1', name: 'lookup', input: {} },
      ],
    });
  });

  it('leaves unsigned reasoning out: Anthropic would refuse a thinking block without its signature', () => {
    const { messages } = toAnthropicMessages([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a', reasoning: [{ type: 'thinking', text: 'from another provider' }] },
    ]);
    expect(messages[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'a' }] });
  });
});
