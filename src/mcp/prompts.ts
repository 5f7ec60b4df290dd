import type { AssistantMessage, ImagePart, UserMessage } from '../core/messages.ts';
import { capContent, contentText } from './resources.ts';
import { defined } from '../core/defined.ts';

export interface McpPromptInfo {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly arguments?: readonly { readonly name: string; readonly description?: string; readonly required?: boolean }[];
}

export interface RawPromptContent {
  readonly type: string;
  readonly text?: string;
  readonly data?: string;
  readonly mimeType?: string;
  readonly uri?: string;
  readonly name?: string;
  readonly resource?: { readonly uri?: string; readonly mimeType?: string; readonly text?: string; readonly blob?: string };
}

export interface RawPromptMessage {
  readonly role: string;
  readonly content: RawPromptContent;
}

/**
 * @example
 * ```ts
 * const prompt = await server.prompt('review', { file: 'src/app.ts' });
 * await agent.run(prompt.task, { history: prompt.history });
 * ```
 */
export interface McpPrompt {
  readonly description?: string;
  readonly messages: readonly (UserMessage | AssistantMessage)[];
  /** A prompt that ends with the assistant's words is all of `text`. */
  readonly task: string | readonly (string | ImagePart)[];
  readonly history: readonly (UserMessage | AssistantMessage)[];
  /** The role is named on each message when there are several. */
  readonly text: string;
}

function bytesOf(data: string): number {
  return Buffer.from(data, 'base64').length;
}

function piece(block: RawPromptContent): string | ImagePart {
  switch (block.type) {
    case 'text':
      return block.text ?? '';
    case 'image':
      if (typeof block.data === 'string' && block.data !== '' && typeof block.mimeType === 'string') return { type: 'image', data: block.data, mediaType: block.mimeType };
      return '[image without data]';
    case 'audio':
      return `[audio: ${block.mimeType ?? 'unknown type'}, ${bytesOf(block.data ?? '')} bytes]`;
    case 'resource': {
      const r = block.resource ?? {};
      const uri = r.uri ?? 'without uri';
      const raw = { uri, ...defined({ mimeType: r.mimeType }), ...(r.blob === undefined ? { text: r.text ?? '' } : { blob: r.blob }) };
      return `[resource ${uri}]\n${contentText(capContent(raw))}`;
    }
    case 'resource_link':
      return `[resource link: ${block.uri ?? 'no uri'}${block.name === undefined ? '' : ` (${block.name})`}]`;
    default:
      return `[${block.type} content]`;
  }
}

const textOf = (pieces: readonly (string | ImagePart)[]): string =>
  pieces.map((p) => (typeof p === 'string' ? p : `[image: ${p.mediaType ?? 'unknown type'}]`)).join('\n');

/** Consecutive messages of one role are joined: the protocol sends one content block per message. */
export function toPrompt(result: { readonly description?: string; readonly messages: readonly RawPromptMessage[] }): McpPrompt {
  const turns: { role: 'user' | 'assistant'; pieces: (string | ImagePart)[] }[] = [];
  for (const message of result.messages) {
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const last = turns.at(-1);
    if (last?.role === role) last.pieces.push(piece(message.content));
    else turns.push({ role, pieces: [piece(message.content)] });
  }
  const messages = turns.map((turn): UserMessage | AssistantMessage => {
    if (turn.role === 'assistant' || turn.pieces.every((p) => typeof p === 'string')) return { role: turn.role, content: textOf(turn.pieces) };
    return { role: 'user', content: turn.pieces.map((p) => (typeof p === 'string' ? { type: 'text' as const, text: p } : p)) };
  });
  const text = turns.length === 1 ? textOf(turns[0]!.pieces) : turns.map((turn) => `${turn.role === 'user' ? 'User' : 'Assistant'}: ${textOf(turn.pieces)}`).join('\n\n');
  const last = turns.at(-1);
  const endsWithUser = last?.role === 'user';
  const task = !endsWithUser ? text : last.pieces.every((p) => typeof p === 'string') ? textOf(last.pieces) : last.pieces;
  return {
    ...defined({ description: result.description }),
    messages,
    task,
    history: endsWithUser ? messages.slice(0, -1) : [],
    text,
  };
}
