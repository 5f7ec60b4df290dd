import { describe, expect, it } from 'vitest';
import {
  assertValidConversation,
  ConversationError,
  unansweredToolCalls,
  validateConversation,
} from '../../src/conversation/validate.ts';
import type { Message } from '../../src/core/messages.ts';
import { ActorloopError } from '../../src/core/errors.ts';

const call = (id: string, name = 'add', args = '{"a":1,"b":2}') => ({ id, name, arguments: args });

/** A valid multi-turn conversation with a parallel tool call (two calls in one message). */
const multiTurn: Message[] = [
  { role: 'system', content: 'Be precise.' },
  { role: 'user', content: 'Add 1+2 and 3+4' },
  { role: 'assistant', content: null, toolCalls: [call('c1'), call('c2', 'add', '{"a":3,"b":4}')] },
  // Results may come back in any order.
  { role: 'tool', toolCallId: 'c2', name: 'add', content: '7' },
  { role: 'tool', toolCallId: 'c1', name: 'add', content: '3' },
  { role: 'assistant', content: '3 and 7' },
  { role: 'user', content: 'Now 5+5' },
  { role: 'assistant', content: 'Calling add.', toolCalls: [call('c3', 'add', '{"a":5,"b":5}')] },
  { role: 'tool', toolCallId: 'c3', content: 'boom', isError: true },
  { role: 'assistant', content: 'The tool failed.' },
];

describe('validateConversation', () => {
  it('accepts a valid multi-turn conversation with parallel tool calls', () => {
    const result = validateConversation(multiTurn);
    expect(result).toEqual({ ok: true, messages: multiTurn });
  });

  it('accepts an empty conversation', () => {
    expect(validateConversation([])).toEqual({ ok: true, messages: [] });
  });

  it('reports invalid_message with the index and path of a schema violation', () => {
    const result = validateConversation([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, toolCalls: [{ id: '', name: 'x', arguments: '{}' }] },
      { role: 'robot', content: 'beep' },
      null,
    ]);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues.map((i) => [i.index, i.code])).toEqual([
      [1, 'invalid_message'],
      [2, 'invalid_message'],
      [3, 'invalid_message'],
    ]);
    expect(result.issues[0]?.path).toEqual(['toolCalls', 0, 'id']);
    expect(result.issues[0]?.message).toContain('toolCalls.0.id');
  });

  it('reports orphan_tool_result for a result with no issuing call', () => {
    const result = validateConversation([
      { role: 'user', content: 'hi' },
      { role: 'tool', toolCallId: 'ghost', content: 'x' },
    ]);
    expect(result).toMatchObject({ ok: false, issues: [{ index: 1, code: 'orphan_tool_result' }] });
  });

  it('reports orphan_tool_result when the result comes before its call', () => {
    const result = validateConversation([
      { role: 'tool', toolCallId: 'c1', content: '3' },
      { role: 'assistant', content: null, toolCalls: [call('c1')] },
    ]);
    expect(result).toMatchObject({ ok: false, issues: [{ index: 0, code: 'orphan_tool_result' }] });
  });

  it('reports duplicate_tool_result when a call is answered twice', () => {
    const result = validateConversation([
      { role: 'assistant', content: null, toolCalls: [call('c1')] },
      { role: 'tool', toolCallId: 'c1', content: '3' },
      { role: 'tool', toolCallId: 'c1', content: '3 again' },
    ]);
    expect(result).toMatchObject({ ok: false, issues: [{ index: 2, code: 'duplicate_tool_result' }] });
  });

  it('reports duplicate_tool_call_id within one message and across messages', () => {
    const result = validateConversation([
      { role: 'assistant', content: null, toolCalls: [call('c1'), call('c1')] },
      { role: 'tool', toolCallId: 'c1', content: '3' },
      { role: 'assistant', content: null, toolCalls: [call('c1')] },
    ]);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues.map((i) => [i.index, i.code])).toEqual([
      [0, 'duplicate_tool_call_id'],
      [2, 'duplicate_tool_call_id'],
    ]);
  });

  it('strips unknown keys from returned messages', () => {
    const result = validateConversation([{ role: 'user', content: 'hi', extra: 1 }]);
    expect(result).toEqual({ ok: true, messages: [{ role: 'user', content: 'hi' }] });
  });
});

describe('unansweredToolCalls', () => {
  it('returns the calls without a result, in issue order', () => {
    const messages: Message[] = [
      { role: 'assistant', content: null, toolCalls: [call('c1'), call('c2'), call('c3')] },
      { role: 'tool', toolCallId: 'c2', content: 'ok' },
    ];
    expect(unansweredToolCalls(messages).map((c) => c.id)).toEqual(['c1', 'c3']);
  });

  it('returns nothing when every call is answered', () => {
    expect(unansweredToolCalls(multiTurn)).toEqual([]);
  });
});

describe('assertValidConversation', () => {
  it('returns the parsed messages of a valid conversation', () => {
    expect(assertValidConversation(multiTurn)).toEqual(multiTurn);
  });

  it('throws a ConversationError carrying every issue', () => {
    let caught: unknown;
    try {
      assertValidConversation([
        { role: 'tool', toolCallId: 'a', content: '' },
        { role: 'tool', toolCallId: 'b', content: '' },
      ]);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConversationError);
    expect(caught).toBeInstanceOf(ActorloopError);
    const error = caught as ConversationError;
    expect(error.code).toBe('invalid_conversation');
    expect(error.blame).toBe('user');
    expect(error.name).toBe('ConversationError');
    expect(error.issues.map((i) => i.code)).toEqual(['orphan_tool_result', 'orphan_tool_result']);
    expect(error.message).toContain('"a"');
  });
});
