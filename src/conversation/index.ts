export { ToolCall, SystemMessage, UserMessage, AssistantMessage, ToolMessage, Message, TextPart, ImagePart, FilePart, ContentPart, contentText } from '../core/messages.ts';

export { image, file } from './parts.ts';
export type { ContentLimits, ContentPartProblem, PartData, TaskInput } from './parts.ts';

export {
  validateConversation,
  unansweredToolCalls,
  assertValidConversation,
} from './validate.ts';
export { ConversationError } from './errors.ts';
export type { ConversationIssue, ConversationIssueCode, ConversationValidation } from './validate.ts';

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
