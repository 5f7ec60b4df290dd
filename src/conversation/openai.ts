/**
 * Conversation → OpenAI chat-completions messages. One pass, no copies of message bodies.
 */
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { reasoningText, type Message } from '../core/messages.ts';

/**
 * Serialise a conversation to the `messages` array of an OpenAI chat-completions request.
 *
 * @example
 * ```ts
 * toOpenAIMessages([{ role: 'user', content: 'hi' }]); // [{ role: 'user', content: 'hi' }]
 * ```
 */
export function toOpenAIMessages(messages: readonly Message[], options: OpenAIMessageOptions = {}): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = new Array(messages.length);
  for (let i = 0; i < messages.length; i++) out[i] = toOpenAIMessage(messages[i] as Message, options);
  return out;
}

export interface OpenAIMessageOptions {
  /**
   * Send an assistant message's `reasoning` back as `reasoning_content`. DeepSeek's thinking mode
   * answers 400 when a turn with tool calls comes back without it; OpenAI rejects the field.
   */
  readonly sendReasoningBack?: boolean;
}

export function toOpenAIMessage(message: Message, options: OpenAIMessageOptions = {}): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: message.content };
    case 'assistant': {
      // Not in the SDK's types: the field is DeepSeek's (and vLLM's, MiMo's) extension.
      const thought = options.sendReasoningBack === true && message.reasoning !== undefined ? { reasoning_content: reasoningText(message.reasoning) } : {};
      if (message.toolCalls !== undefined && message.toolCalls.length > 0) {
        return {
          role: 'assistant',
          content: message.content,
          tool_calls: message.toolCalls.map((call) => ({
            id: call.id,
            type: 'function' as const,
            function: { name: call.name, arguments: call.arguments },
          })),
          ...thought,
        };
      }
      return { role: 'assistant', content: message.content ?? '', ...thought };
    }
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}
