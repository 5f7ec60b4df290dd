import type { AssistantMessage, ImagePart, TextPart, UserMessage } from '../core/messages.ts';
import { fenceUntrusted } from '../policy/taint.ts';
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
 * The prompt's text is the server's, not the user's: every message is fenced as untrusted and the
 * user ones marked so, which taints a run that takes them. The user chose the prompt, so `task` is
 * their own short request to answer it.
 * @example
 * ```ts
 * const prompt = await server.prompt('review', { file: 'src/app.ts' });
 * await agent.run(prompt.task, { history: prompt.history });
 * ```
 */
export interface McpPrompt {
  readonly description?: string;
  /** Where the text came from, as the fences and taint name it: `MCP prompt "review" of server "code"`. */
  readonly source: string;
  /** All of the prompt, in order, fenced; user messages carry `untrusted`. */
  readonly messages: readonly (UserMessage | AssistantMessage)[];
  /** Asks the model to respond to the prompt quoted in `history`. */
  readonly task: string;
  /** The prompt's messages: pass them with `task`, or the model never sees the prompt. */
  readonly history: readonly (UserMessage | AssistantMessage)[];
  /** All of it as one fenced text; the role is named on each message when there are several. */
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

function fenced(pieces: readonly (string | ImagePart)[], source: string): string | (TextPart | ImagePart)[] {
  if (pieces.every((p) => typeof p === 'string')) return fenceUntrusted(textOf(pieces), source);
  return pieces.map((p) => (typeof p === 'string' ? { type: 'text' as const, text: fenceUntrusted(p, source) } : p));
}

/** Consecutive messages of one role are joined: the protocol sends one content block per message. */
export function toPrompt(result: { readonly description?: string; readonly messages: readonly RawPromptMessage[] }, from: { readonly server: string; readonly name: string }): McpPrompt {
  const source = `MCP prompt ${JSON.stringify(from.name)} of server ${JSON.stringify(from.server)}`;
  const turns: { role: 'user' | 'assistant'; pieces: (string | ImagePart)[] }[] = [];
  for (const message of result.messages) {
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const last = turns.at(-1);
    if (last?.role === role) last.pieces.push(piece(message.content));
    else turns.push({ role, pieces: [piece(message.content)] });
  }
  const messages = turns.map((turn): UserMessage | AssistantMessage =>
    turn.role === 'assistant' ? { role: 'assistant', content: fenceUntrusted(textOf(turn.pieces), source) } : { role: 'user', content: fenced(turn.pieces, source), untrusted: source },
  );
  const plain = turns.length === 1 ? textOf(turns[0]!.pieces) : turns.map((turn) => `${turn.role === 'user' ? 'User' : 'Assistant'}: ${textOf(turn.pieces)}`).join('\n\n');
  return {
    ...defined({ description: result.description }),
    source,
    messages,
    task: `I chose the ${source}, quoted above: respond to it. Its text comes from the server, not from me.`,
    history: messages,
    text: fenceUntrusted(plain, source),
  };
}
