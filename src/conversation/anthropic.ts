/**
 * Anthropic wants the system prompt apart, tool calls and results as content blocks, and alternating turns. Signed
 * thinking goes back first and unchanged: a tool-use turn whose thinking is missing or altered is refused.
 */
import type { AssistantMessage, ContentPart, Message, ToolMessage } from '../core/messages.ts';
import { inlineData } from './openai.ts';
import { ConversationError } from './errors.ts';
import { parseDataUrl } from './parts.ts';
import { defined } from '../core/defined.ts';

export interface AnthropicTextBlock {
  readonly type: 'text';
  readonly text: string;
}

export interface AnthropicToolUseBlock {
  readonly type: 'tool_use';
  readonly id: string;
  readonly name: string;
  /** The parsed argument object. Malformed arguments arrive as `{ _raw: "<the string>" }`. */
  readonly input: Readonly<Record<string, unknown>>;
}

export type AnthropicImageType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';
const IMAGE_TYPES: readonly string[] = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

function imageType(mediaType: string): AnthropicImageType {
  if (IMAGE_TYPES.includes(mediaType)) return mediaType as AnthropicImageType;
  throw ConversationError.contentPart('unsupported', `Anthropic takes images as ${IMAGE_TYPES.join(', ')}, not ${mediaType}: convert the image first.`);
}

function pdfType(mediaType: string): 'application/pdf' {
  if (mediaType === 'application/pdf') return mediaType;
  throw ConversationError.contentPart('unsupported', `Anthropic takes documents as application/pdf, not ${mediaType}.`);
}

export interface AnthropicImageBlock {
  readonly type: 'image';
  readonly source: { readonly type: 'base64'; readonly media_type: AnthropicImageType; readonly data: string } | { readonly type: 'url'; readonly url: string };
}

export interface AnthropicDocumentBlock {
  readonly type: 'document';
  readonly source: { readonly type: 'base64'; readonly media_type: 'application/pdf'; readonly data: string };
  readonly title?: string;
}

export interface AnthropicToolResultBlock {
  readonly type: 'tool_result';
  readonly tool_use_id: string;
  readonly content: string | (AnthropicTextBlock | AnthropicImageBlock)[];
  readonly is_error?: boolean;
}

export interface AnthropicThinkingBlock {
  readonly type: 'thinking';
  readonly thinking: string;
  readonly signature: string;
}

export interface AnthropicRedactedThinkingBlock {
  readonly type: 'redacted_thinking';
  readonly data: string;
}

export type AnthropicUserBlock = AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock | AnthropicToolResultBlock;
export type AnthropicAssistantBlock = AnthropicThinkingBlock | AnthropicRedactedThinkingBlock | AnthropicTextBlock | AnthropicToolUseBlock;

export type AnthropicMessage =
  | { readonly role: 'user'; content: string | AnthropicUserBlock[] }
  | { readonly role: 'assistant'; content: AnthropicAssistantBlock[] };

export interface AnthropicConversation {
  /** Every system message, in order, joined by a blank line; absent when there are none. */
  readonly system?: string;
  readonly messages: AnthropicMessage[];
}

/** Consecutive user-side messages merge into one turn, tool results first; an assistant message with neither text nor calls is dropped (empty turns are rejected). */
export function toAnthropicMessages(messages: readonly Message[]): AnthropicConversation {
  const system: string[] = [];
  const out: AnthropicMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        system.push(message.content);
        break;
      case 'user':
        if (typeof message.content === 'string') appendUser(out, { type: 'text', text: message.content }, message.content);
        else for (const part of message.content) appendUser(out, toAnthropicBlock(part));
        break;
      case 'tool':
        appendUser(out, toToolResult(message));
        break;
      case 'assistant': {
        const blocks = toAssistantBlocks(message);
        if (blocks.length === 0) break;
        const last = out[out.length - 1];
        if (last?.role === 'assistant') last.content.push(...blocks);
        else out.push({ role: 'assistant', content: blocks });
        break;
      }
    }
  }
  return system.length > 0 ? { system: system.join('\n\n'), messages: out } : { messages: out };
}

/** Anything that is not a JSON object is kept as `{ _raw }`, not `{}`: a replay must show the model exactly what it sent, so it can repair it. */
export function toToolUseInput(argumentsText: string): Readonly<Record<string, unknown>> {
  if (argumentsText.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(argumentsText);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Fall through: malformed JSON is preserved below.
  }
  return { _raw: argumentsText };
}

function toAssistantBlocks(message: AssistantMessage): AnthropicAssistantBlock[] {
  const blocks: AnthropicAssistantBlock[] = [];
  for (const part of message.reasoning ?? []) {
    if (part.type === 'redacted') blocks.push({ type: 'redacted_thinking', data: part.data });
    // Unsigned reasoning (another provider's, or none given) would be refused; it stays ours.
    else if (part.signature !== undefined) blocks.push({ type: 'thinking', thinking: part.text, signature: part.signature });
  }
  // Anthropic rejects empty text blocks, so an empty reply text is simply left out.
  if (message.content !== null && message.content !== '') blocks.push({ type: 'text', text: message.content });
  if (message.toolCalls !== undefined) {
    for (const call of message.toolCalls) {
      blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: toToolUseInput(call.arguments) });
    }
  }
  return blocks;
}

function toToolResult(message: ToolMessage): AnthropicToolResultBlock {
  const images = message.parts ?? [];
  // A tool that answered with an image alone has no text, and Anthropic refuses an empty text block.
  const text: AnthropicTextBlock[] = message.content === '' ? [] : [{ type: 'text', text: message.content }];
  const content: AnthropicToolResultBlock['content'] =
    images.length === 0 ? message.content : [...text, ...images.map((part) => toAnthropicBlock(part) as AnthropicImageBlock)];
  return message.isError === true
    ? { type: 'tool_result', tool_use_id: message.toolCallId, content, is_error: true }
    : { type: 'tool_result', tool_use_id: message.toolCallId, content };
}

export function toAnthropicBlock(part: ContentPart): AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image': {
      if (part.url !== undefined) {
        const inline = parseDataUrl(part.url);
        return inline === undefined
          ? { type: 'image', source: { type: 'url', url: part.url } }
          : { type: 'image', source: { type: 'base64', media_type: imageType(inline.mediaType), data: inline.data } };
      }
      return { type: 'image', source: { type: 'base64', media_type: imageType(part.mediaType ?? 'image/png'), data: inlineData(part) } };
    }
    case 'file':
      return {
        type: 'document',
        source: { type: 'base64', media_type: pdfType(part.mediaType), data: inlineData(part) },
        ...defined({ title: part.filename }),
      };
  }
}

/** A lone user text stays a plain string, the most common and compact shape. */
function appendUser(out: AnthropicMessage[], block: AnthropicUserBlock, plain?: string): void {
  const last = out[out.length - 1];
  if (last?.role !== 'user') {
    out.push({ role: 'user', content: plain ?? [block] });
    return;
  }
  if (typeof last.content === 'string') last.content = [{ type: 'text', text: last.content }];
  if (block.type !== 'tool_result') {
    last.content.push(block);
    return;
  }
  // Tool results go before any text (or image, or document) of the turn, as Anthropic requires.
  let at = last.content.length;
  while (at > 0 && last.content[at - 1]?.type !== 'tool_result') at--;
  last.content.splice(at, 0, block);
}
