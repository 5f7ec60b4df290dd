/**
 * The conversation module: message schemas, validation, and serialisation to OpenAI and
 * Anthropic request shapes.
 *
 * @example
 * ```ts
 * import { assertValidConversation, toAnthropicMessages } from './conversation/index.ts';
 * const { system, messages } = toAnthropicMessages(assertValidConversation(stored));
 * ```
 */

// Message schemas (each schema and its type share a name).
export { ToolCall, SystemMessage, UserMessage, AssistantMessage, ToolMessage, Message } from '../core/messages.ts';

// Validation.
export {
  validateConversation,
  unansweredToolCalls,
  assertValidConversation,
  ConversationError,
} from './validate.ts';
export type { ConversationIssue, ConversationIssueCode, ConversationValidation } from './validate.ts';

// Serialisation.
export { toOpenAIMessages, toOpenAIMessage } from './openai.ts';
export { toAnthropicMessages, toToolUseInput } from './anthropic.ts';
export type {
  AnthropicConversation,
  AnthropicMessage,
  AnthropicTextBlock,
  AnthropicToolUseBlock,
  AnthropicToolResultBlock,
  AnthropicUserBlock,
  AnthropicAssistantBlock,
  AnthropicThinkingBlock,
  AnthropicRedactedThinkingBlock,
} from './anthropic.ts';
