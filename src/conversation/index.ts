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
export { ToolCall, SystemMessage, UserMessage, AssistantMessage, ToolMessage, Message, TextPart, ImagePart, FilePart, ContentPart, contentText } from '../core/messages.ts';

// Content parts.
export { image, file } from './parts.ts';
export type { ContentLimits, ContentPartProblem, PartData, TaskInput } from './parts.ts';

// Validation.
export {
  validateConversation,
  unansweredToolCalls,
  assertValidConversation,
} from './validate.ts';
export { ConversationError } from './errors.ts';
export type { ConversationIssue, ConversationIssueCode, ConversationValidation } from './validate.ts';

// Serialisation.
export { toOpenAIMessages, toOpenAIMessage, toOpenAIPart } from './openai.ts';
export { toAnthropicMessages, toToolUseInput, toAnthropicBlock } from './anthropic.ts';
export type {
  AnthropicConversation,
  AnthropicMessage,
  AnthropicTextBlock,
  AnthropicToolUseBlock,
  AnthropicToolResultBlock,
  AnthropicImageBlock,
  AnthropicDocumentBlock,
  AnthropicUserBlock,
  AnthropicAssistantBlock,
  AnthropicThinkingBlock,
  AnthropicRedactedThinkingBlock,
} from './anthropic.ts';
