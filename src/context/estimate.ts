/**
 * UTF-8 bytes/4 rounded up by default (chars/4 for ASCII): an underestimate gets the request rejected, an overestimate only
 * compacts early. Bytes, not UTF-16 units: byte-level tokenizers spend far more than a quarter token on a Chinese character.
 */
import { contentText, mediaParts, type Message } from '../core/messages.ts';
import { DEFAULTS } from '../core/defaults.ts';

/** Counts the tokens of one piece of text exactly (e.g. a tiktoken encoder's `encode(t).length`). */
export type Tokenizer = (text: string) => number;

export interface EstimateOptions {
  readonly tokenizer?: Tokenizer;
  readonly messageOverheadTokens?: number;
}

/** Tool traffic counts its call ids, names and argument texts too: the provider sends them all. */
export function estimateMessageTokens(message: Message, options: EstimateOptions = {}): number {
  const overhead = options.messageOverheadTokens ?? DEFAULTS.context.messageOverheadTokens;
  const tokenizer = options.tokenizer;
  if (tokenizer === undefined) return overhead + Math.ceil(messageChars(message) / 4);
  let tokens = overhead + count(tokenizer, message.role === 'user' ? contentText(message.content) : (message.content ?? '')) + mediaTokens(message);
  if (message.role === 'assistant' && message.toolCalls !== undefined) {
    for (const call of message.toolCalls) tokens += count(tokenizer, call.id) + count(tokenizer, call.name) + count(tokenizer, call.arguments);
  } else if (message.role === 'tool') {
    tokens += count(tokenizer, message.toolCallId) + (message.name === undefined ? 0 : count(tokenizer, message.name));
  }
  return tokens;
}

export function estimateTokens(messages: readonly Message[], options: EstimateOptions = {}): number {
  let tokens = 0;
  for (const message of messages) tokens += estimateMessageTokens(message, options);
  return tokens;
}

/** Remembers by message object: the loop never rewrites a message, so each step measures only new ones. */
export function createTokenCounter(options: EstimateOptions = {}): (message: Message) => number {
  const known = new WeakMap<Message, number>();
  return (message) => {
    let tokens = known.get(message);
    if (tokens === undefined) {
      tokens = estimateMessageTokens(message, options);
      known.set(message, tokens);
    }
    return tokens;
  };
}

function messageChars(message: Message): number {
  let chars = utf8Length(message.role === 'user' ? contentText(message.content) : (message.content ?? ''));
  chars += mediaTokens(message) * 4;
  if (message.role === 'assistant' && message.toolCalls !== undefined) {
    for (const call of message.toolCalls) chars += utf8Length(call.id) + utf8Length(call.name) + utf8Length(call.arguments);
  } else if (message.role === 'tool') {
    chars += utf8Length(message.toolCallId) + utf8Length(message.name ?? '');
  }
  return chars;
}

export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function count(tokenizer: Tokenizer, text: string): number {
  if (text === '') return 0;
  const tokens = tokenizer(text);
  // A broken tokenizer (NaN, negative) must not make every budget check pass: fall back to bytes/4.
  return Number.isFinite(tokens) && tokens >= 0 ? Math.ceil(tokens) : Math.ceil(utf8Length(text) / 4);
}

function mediaTokens(message: Message): number {
  if (message.role === 'user') return mediaParts(message.content) * DEFAULTS.context.mediaPartTokens;
  if (message.role === 'tool') return (message.parts?.length ?? 0) * DEFAULTS.context.mediaPartTokens;
  return 0;
}
