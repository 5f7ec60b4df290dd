/**
 * Conversation → Anthropic Messages API shape, with our own types (no SDK dependency).
 *
 * Anthropic differs from OpenAI in three ways that matter here: the system prompt is a
 * separate field; tool calls and results are content blocks (`tool_use` / `tool_result`) inside
 * assistant and user turns; and turns must alternate user/assistant, so consecutive tool results
 * (and a user message right after them) become one user turn.
 *
 * Reasoning a provider signed (thinking blocks with their signature, redacted thinking) goes back
 * first in its assistant turn, unchanged: Anthropic refuses a tool-use turn whose thinking is
 * missing or altered while thinking is on.
 */
import type { AssistantMessage, ContentPart, Message, ToolMessage } from '../core/messages.ts';
import { inlineData } from './openai.ts';
import { ConversationError } from './errors.ts';
import { parseDataUrl } from './parts.ts';

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

/** The image types the Messages API takes. */
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

/** An image: its bytes (base64) with their media type, or a URL Anthropic fetches. */
export interface AnthropicImageBlock {
  readonly type: 'image';
  readonly source: { readonly type: 'base64'; readonly media_type: AnthropicImageType; readonly data: string } | { readonly type: 'url'; readonly url: string };
}

/** A PDF document, as base64 bytes. */
export interface AnthropicDocumentBlock {
  readonly type: 'document';
  readonly source: { readonly type: 'base64'; readonly media_type: 'application/pdf'; readonly data: string };
  readonly title?: string;
}

export interface AnthropicToolResultBlock {
  readonly type: 'tool_result';
  readonly tool_use_id: string;
  /** Text; or text and the images the tool returned. */
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

/**
 * Serialise a conversation for the Anthropic Messages API.
 *
 * - System messages (wherever they are) are joined with `\n\n` into `system`: Anthropic has
 *   no mid-conversation system role.
 * - Consecutive user-side messages (tool results, user text) merge into one user turn, tool
 *   results first (Anthropic wants `tool_result` blocks before any text in a turn).
 * - Consecutive assistant messages merge likewise; an assistant message with neither text nor
 *   tool calls is dropped (an empty turn is rejected and carries no information).
 *
 * @example
 * ```ts
 * toAnthropicMessages([
 *   { role: 'system', content: 'Be brief.' },
 *   { role: 'user', content: 'Add 1 and 2' },
 *   { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'add', arguments: '{"a":1,"b":2}' }] },
 *   { role: 'tool', toolCallId: 'c1', content: '3' },
 * ]);
 * // { system: 'Be brief.', messages: [
 * //   { role: 'user', content: 'Add 1 and 2' },
 * //   { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'add', input: { a: 1, b: 2 } }] },
 * //   { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: '3' }] } ] }
 * ```
 */
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

/**
 * Parse tool-call arguments into Anthropic's `input` object.
 *
 * Anthropic requires an object. Empty arguments (`""`, common for argument-less tools) mean
 * `{}`. Anything that is not a JSON object — truncated JSON, prose, an array — is kept as
 * `{ _raw: "<string>" }` rather than `{}`: replaying the conversation must show the model
 * exactly what it sent, so it can see and repair its mistake.
 *
 * @example
 * ```ts
 * toToolUseInput('{"a":1}'); // { a: 1 }
 * toToolUseInput('{"a":');   // { _raw: '{"a":' }
 * ```
 */
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
  // A tool result block takes images beside its text.
  const content: AnthropicToolResultBlock['content'] =
    images.length === 0 ? message.content : [{ type: 'text', text: message.content }, ...images.map((part) => toAnthropicBlock(part) as AnthropicImageBlock)];
  return message.isError === true
    ? { type: 'tool_result', tool_use_id: message.toolCallId, content, is_error: true }
    : { type: 'tool_result', tool_use_id: message.toolCallId, content };
}

/**
 * One content part as an Anthropic block: text; an image with a base64 or URL source (a data
 * URL becomes base64); a file as a base64 `document`.
 *
 * @example
 * ```ts
 * toAnthropicBlock({ type: 'image', url: 'https://x/cat.png' }); // { type: 'image', source: { type: 'url', url: 'https://x/cat.png' } }
 * ```
 */
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
        ...(part.filename === undefined ? {} : { title: part.filename }),
      };
  }
}

/**
 * Add a block to the user turn at the end of `out`, opening one if needed. A lone user text
 * stays a plain string (`plain`), the most common and most compact shape.
 */
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
