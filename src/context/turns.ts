/** A call and its results form one turn, so no strategy can send a result without its call or the reverse: providers reject both. */
import type { Message } from '../core/messages.ts';

/** A conversation split into turns; arrays indexed by turn, in order of each turn's first message. */
export interface Turns {
  readonly turnOf: Int32Array;
  readonly tokens: number[];
  readonly sizes: number[];
  /** Turns no strategy may remove: system messages, the first and the latest user message. */
  readonly pinned: boolean[];
  readonly unpinned: number[];
  readonly total: number;
}

/**
 * A tool message joins the message that issued its call wherever the two stand. Pinned: system messages, the first
 * user message (the task as first stated) and the latest (what the model must answer now).
 */
export function groupTurns(messages: readonly Message[], tokensOf: (message: Message) => number): Turns {
  const n = messages.length;
  const issuer = new Map<string, number>();
  let firstUser = -1;
  let lastUser = -1;
  for (let i = 0; i < n; i++) {
    const message = messages[i] as Message;
    if (message.role === 'assistant' && message.toolCalls !== undefined) {
      for (const call of message.toolCalls) if (!issuer.has(call.id)) issuer.set(call.id, i);
    } else if (message.role === 'user') {
      if (firstUser === -1) firstUser = i;
      lastUser = i;
    }
  }
  const turnOf = new Int32Array(n).fill(-1);
  const tokens: number[] = [];
  const sizes: number[] = [];
  const pinned: boolean[] = [];
  let total = 0;
  for (let i = 0; i < n; i++) {
    const message = messages[i] as Message;
    let turn = turnOf[i] as number;
    if (turn === -1 && message.role === 'tool') {
      const owner = issuer.get(message.toolCallId);
      // The owner's turn may not exist yet when a malformed history puts a result before its call.
      if (owner !== undefined) {
        turn = turnOf[owner] as number;
        if (turn === -1) turnOf[owner] = turn = newTurn(false);
      }
    }
    if (turn === -1) turn = newTurn(message.role === 'system' || i === firstUser || i === lastUser);
    turnOf[i] = turn;
    const cost = tokensOf(message);
    tokens[turn] = (tokens[turn] as number) + cost;
    sizes[turn] = (sizes[turn] as number) + 1;
    total += cost;
  }
  const unpinned: number[] = [];
  for (let t = 0; t < pinned.length; t++) if (!pinned[t]) unpinned.push(t);
  return { turnOf, tokens, sizes, pinned, unpinned, total };

  function newTurn(isPinned: boolean): number {
    tokens.push(0);
    sizes.push(0);
    pinned.push(isPinned);
    return pinned.length - 1;
  }
}
