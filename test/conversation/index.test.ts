import { describe, expect, expectTypeOf, it } from 'vitest';
import * as conversation from '../../src/conversation/index.ts';
import type { ConversationIssueCode, Message } from '../../src/conversation/index.ts';

describe('conversation module', () => {
  it('exports schemas, content parts, validation and both serialisers by name', () => {
    expect(Object.keys(conversation).sort()).toEqual(
      [
        'AssistantMessage',
        'ContentPart',
        'FilePart',
        'ImagePart',
        'TextPart',
        'contentText',
        'file',
        'image',
        'toAnthropicBlock',
        'toOpenAIPart',
        'ConversationError',
        'Message',
        'SystemMessage',
        'ToolCall',
        'ToolMessage',
        'UserMessage',
        'assertValidConversation',
        'toAnthropicMessages',
        'toOpenAIMessage',
        'toOpenAIMessages',
        'toToolUseInput',
        'unansweredToolCalls',
        'validateConversation',
      ].sort(),
    );
  });

  it('narrows the validation result on ok', () => {
    const result = conversation.validateConversation([]);
    if (result.ok) expectTypeOf(result.messages).toEqualTypeOf<Message[]>();
    else expectTypeOf(result.issues[0]!.code).toEqualTypeOf<ConversationIssueCode>();
    expectTypeOf<ConversationIssueCode>().toEqualTypeOf<
      'invalid_message' | 'orphan_tool_result' | 'duplicate_tool_result' | 'duplicate_tool_call_id'
    >();
  });
});
