/**
 * Conversation → OpenAI chat-completions messages. One pass, no copies of message bodies.
 */
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { Message } from '../core/messages.ts';

/**
 * Serialise a conversation to the `messages` array of an OpenAI chat-completions request.
 *
 * @example
 * ```ts
 * toOpenAIMessages([{ role: 'user', content: 'hi' }]); // [{ role: 'user', content: 'hi' }]
 * ```
 */
export function toOpenAIMessages(messages: readonly Message[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = new Array(messages.length);
  for (let i = 0; i < messages.length; i++) out[i] = toOpenAIMessage(messages[i] as Message);
  return out;
}

export function toOpenAIMessage(message: Message): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: message.content };
    case 'assistant':
      if (message.toolCalls !== undefined && message.toolCalls.length > 0) {
        return {
          role: 'assistant',
          content: message.content,
          tool_calls: message.toolCalls.map((call) => ({
            id: call.id,
            type: 'function' as const,
            function: { name: call.name, arguments: call.arguments },
          })),
        };
      }
      return { role: 'assistant', content: message.content ?? '' };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}
