import type { ChatCompletionContentPart, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { reasoningText, type ContentPart, type ImagePart, type Message, type ToolMessage } from '../core/messages.ts';
import { ConversationError } from './errors.ts';

export function toOpenAIMessages(messages: readonly Message[], options: OpenAIMessageOptions = {}): ChatCompletionMessageParam[] {
  if (options.systemFirst === true && scatteredSystem(messages)) {
    const system = messages.flatMap((message) => (message.role === 'system' ? [message.content] : []));
    const rest = messages.filter((message) => message.role !== 'system');
    return [{ role: 'system', content: system.join('\n\n') }, ...toOpenAIMessages(rest, { ...options, systemFirst: false })];
  }
  const out: ChatCompletionMessageParam[] = [];
  // Chat tool messages carry text only: images a tool returned follow the turn's tool results as one user message.
  let toolImages: ToolMessage[] = [];
  for (const message of messages) {
    if (message.role !== 'tool' && toolImages.length > 0) {
      out.push(toolImagesMessage(toolImages));
      toolImages = [];
    }
    out.push(toOpenAIMessage(message, options));
    if (message.role === 'tool' && message.parts !== undefined && message.parts.length > 0) toolImages.push(message);
  }
  if (toolImages.length > 0) out.push(toolImagesMessage(toolImages));
  return out;
}

/** More than one system message, or one that is not first. */
export function scatteredSystem(messages: readonly Message[]): boolean {
  return messages.some((message, index) => message.role === 'system' && index > 0);
}

function toolImagesMessage(results: readonly ToolMessage[]): ChatCompletionMessageParam {
  const content: ChatCompletionContentPart[] = [];
  for (const result of results) {
    content.push({ type: 'text', text: `Images returned by the tool ${result.name ?? 'call'} (call ${result.toolCallId}):` });
    for (const part of result.parts ?? []) content.push(toOpenAIPart(part));
  }
  return { role: 'user', content };
}

/** A part stored by reference must have its bytes put back first (the agent does so before each model call). */
export function toOpenAIPart(part: ContentPart): ChatCompletionContentPart {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return { type: 'image_url', image_url: { url: part.url ?? dataUrl(part, inlineData(part)) } };
    case 'file':
      return { type: 'file', file: { file_data: dataUrl(part, inlineData(part)), filename: part.filename ?? 'document.pdf' } };
  }
}

function dataUrl(part: { readonly mediaType?: string | undefined }, data: string): string {
  return `data:${part.mediaType ?? 'application/octet-stream'};base64,${data}`;
}

/** The part's base64 bytes; a part still stored by reference cannot be sent. */
export function inlineData(part: Exclude<ContentPart, { type: 'text' }> | ImagePart): string {
  if (part.data !== undefined) return part.data;
  throw ConversationError.contentPart('missing_data', `A ${part.type} part refers to stored bytes (${part.ref ?? 'no reference'}) that were not loaded before the model call. Send the conversation through the agent, or put the bytes in \`data\`.`);
}

export interface OpenAIMessageOptions {
  /** DeepSeek's thinking mode answers 400 when a tool-call turn comes back without `reasoning_content`; OpenAI rejects the field. */
  readonly sendReasoningBack?: boolean;
  /** All system messages as one, first: some chat templates refuse any other placement. */
  readonly systemFirst?: boolean;
}

export function toOpenAIMessage(message: Message, options: OpenAIMessageOptions = {}): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: typeof message.content === 'string' ? message.content : message.content.map(toOpenAIPart) };
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
            // Not in the SDK's types: Gemini's, which refuses a signed call sent back without it.
            ...extraContentOf(call.extraContent),
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

/** The schema holds `extraContent` to an object's JSON; a message built by hand without the schema may not be. */
function extraContentOf(text: string | undefined): { extra_content?: unknown } {
  if (text === undefined) return {};
  try {
    return { extra_content: JSON.parse(text) as unknown };
  } catch {
    return {};
  }
}
