/**
 * Token estimates for the context budget. The default is deliberately conservative —
 * characters / 4, rounded up, plus a per-message overhead — because an underestimate sends a
 * request the provider rejects with "context length exceeded", while an overestimate only
 * compacts a little early. Text in scripts that tokenise densely (CJK, emoji) beats chars/4;
 * plug in the model's real tokenizer for those.
 */
import { contentText, mediaParts, type Message } from '../core/messages.ts';
import { DEFAULTS } from '../core/defaults.ts';

/** Counts the tokens of one piece of text exactly (e.g. a tiktoken encoder's `encode(t).length`). */
export type Tokenizer = (text: string) => number;

export interface EstimateOptions {
  /** Exact token count of a text; default `Math.ceil(text.length / 4)` over the whole message. */
  readonly tokenizer?: Tokenizer;
  /** Tokens added per message for role and framing. Default `DEFAULTS.context.messageOverheadTokens`. */
  readonly messageOverheadTokens?: number;
}

/**
 * Tokens one message costs: its content, and for tool traffic the call ids, tool names and
 * argument texts (the provider sends all of them), plus the per-message overhead.
 *
 * @example
 * ```ts
 * estimateMessageTokens({ role: 'user', content: 'hello world' }); // ceil(11 / 4) + 4 = 7
 * ```
 */
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

/**
 * Tokens a conversation costs by the estimator: the sum over its messages. One pass, reading
 * string lengths only (unless a tokenizer is given).
 *
 * @example
 * ```ts
 * estimateTokens([
 *   { role: 'system', content: 'Be brief.' },    // ceil(9 / 4) + 4 = 7
 *   { role: 'user', content: 'What is 6 * 7?' }, // ceil(14 / 4) + 4 = 8
 * ]); // 15
 * estimateTokens(messages, { tokenizer: (t) => encoder.encode(t).length });
 * ```
 */
export function estimateTokens(messages: readonly Message[], options: EstimateOptions = {}): number {
  let tokens = 0;
  for (const message of messages) tokens += estimateMessageTokens(message, options);
  return tokens;
}

/**
 * A per-message estimator that remembers its answers by message object. The loop appends to
 * its conversation and never rewrites a message, so from one step to the next only new
 * messages are measured — which matters when the tokenizer is an exact, slow one.
 *
 * @example
 * ```ts
 * const tokensOf = createTokenCounter({ tokenizer });
 * tokensOf(message); // measured
 * tokensOf(message); // remembered
 * ```
 */
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
  let chars = message.role === 'user' ? contentText(message.content).length : (message.content?.length ?? 0);
  chars += mediaTokens(message) * 4;
  if (message.role === 'assistant' && message.toolCalls !== undefined) {
    for (const call of message.toolCalls) chars += call.id.length + call.name.length + call.arguments.length;
  } else if (message.role === 'tool') {
    chars += message.toolCallId.length + (message.name?.length ?? 0);
  }
  return chars;
}

function count(tokenizer: Tokenizer, text: string): number {
  if (text === '') return 0;
  const tokens = tokenizer(text);
  // A broken tokenizer (NaN, negative) must not make every budget check pass: fall back to chars/4.
  return Number.isFinite(tokens) && tokens >= 0 ? Math.ceil(tokens) : Math.ceil(text.length / 4);
}

/** The estimate's allowance for a message's images and files. */
function mediaTokens(message: Message): number {
  if (message.role === 'user') return mediaParts(message.content) * DEFAULTS.context.mediaPartTokens;
  if (message.role === 'tool') return (message.parts?.length ?? 0) * DEFAULTS.context.mediaPartTokens;
  return 0;
}
