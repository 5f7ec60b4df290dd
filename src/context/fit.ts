/** Both compactions work on whole turns and reuse message objects; only masked results are new objects. */
import type { Message, ToolMessage } from '../core/messages.ts';
import { groupTurns } from './turns.ts';

export interface FitOptions {
  readonly budget: number;
  readonly tokensOf: (message: Message) => number;
  readonly mask: boolean;
  readonly keepRecent: number;
  /** The masked stand-in of a tool result (the caller caches it, so a step reuses the last step's). */
  readonly maskedOf: (message: ToolMessage, toolName: string | undefined) => ToolMessage;
}

export interface FitResult {
  /** The input array itself when nothing had to change. */
  readonly messages: readonly Message[];
  readonly tokens: number;
  readonly masked: number;
  readonly dropped: number;
}

/**
 * Masks old tool results, then drops the oldest unpinned turns, until it fits. The newest turn is never touched: it
 * holds the results the model asked for last, and without them it would ask again.
 */
export function fitToBudget(messages: readonly Message[], options: FitOptions): FitResult {
  const { budget, tokensOf } = options;
  const turns = groupTurns(messages, tokensOf);
  let total = turns.total;
  if (total <= budget) return { messages, tokens: total, masked: 0, dropped: 0 };
  const { turnOf, unpinned } = turns;
  const newest = unpinned.length === 0 ? -1 : (unpinned[unpinned.length - 1] as number);

  let replacements: (Message | undefined)[] | undefined;
  if (options.mask) {
    const maskable = new Uint8Array(turns.pinned.length);
    const protectFrom = unpinned.length - Math.max(1, options.keepRecent);
    for (let k = 0; k < protectFrom; k++) maskable[unpinned[k] as number] = 1;
    let names: Map<string, string> | undefined;
    for (let i = 0; i < messages.length && total > budget; i++) {
      const message = messages[i] as Message;
      const turn = turnOf[i] as number;
      if (message.role !== 'tool' || maskable[turn] !== 1) continue;
      names ??= callNames(messages);
      const marker = options.maskedOf(message, message.name ?? names.get(message.toolCallId));
      const saved = tokensOf(message) - tokensOf(marker);
      if (saved <= 0) continue;
      (replacements ??= new Array<Message | undefined>(messages.length))[i] = marker;
      turns.tokens[turn] = (turns.tokens[turn] as number) - saved;
      total -= saved;
    }
  }

  const dropped = new Uint8Array(turns.pinned.length);
  let droppedMessages = 0;
  for (let k = 0; k < unpinned.length && total > budget; k++) {
    const turn = unpinned[k] as number;
    if (turn === newest) break;
    dropped[turn] = 1;
    total -= turns.tokens[turn] as number;
    droppedMessages += turns.sizes[turn] as number;
  }

  const out: Message[] = [];
  let masked = 0;
  for (let i = 0; i < messages.length; i++) {
    if (dropped[turnOf[i] as number] === 1) continue;
    const replacement = replacements?.[i];
    if (replacement !== undefined) masked++;
    out.push(replacement ?? (messages[i] as Message));
  }
  return { messages: out, tokens: total, masked, dropped: droppedMessages };
}

/** Tool name by call id, for results that do not carry their own `name`. */
function callNames(messages: readonly Message[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== 'assistant' || message.toolCalls === undefined) continue;
    for (const call of message.toolCalls) if (!names.has(call.id)) names.set(call.id, call.name);
  }
  return names;
}
