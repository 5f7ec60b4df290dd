/**
 * Turns: the units the context budget keeps or removes whole. An assistant message that calls
 * tools forms one turn with every tool message answering those calls, so no strategy can ever
 * send a tool result without the call it answers, or a call without its results — providers
 * reject both with a 400. Every other message is a turn of its own.
 */
import type { Message } from '../core/messages.ts';

/** A conversation split into turns; arrays indexed by turn, in order of each turn's first message. */
export interface Turns {
  /** Message index → its turn. */
  readonly turnOf: Int32Array;
  /** Estimated tokens of each turn. */
  readonly tokens: number[];
  /** Messages in each turn. */
  readonly sizes: number[];
  /** Turns no strategy may remove: system messages, the first and the latest user message. */
  readonly pinned: boolean[];
  /** Indices of the other turns, oldest first. */
  readonly unpinned: number[];
  /** Estimated tokens of the whole conversation. */
  readonly total: number;
}

/**
 * Group `messages` into turns in one pass (two, counting the call-id index). A tool message is
 * joined to the assistant message that issued its call wherever the two stand; a tool message
 * whose call no message issued (an orphan, only possible in a malformed history) is a turn of
 * its own.
 *
 * Pinned: every system message (instructions, injected knowledge, the summary), the first
 * user message (the task as first stated) and the latest one (what the model must answer now).
 *
 * @example
 * ```ts
 * const turns = groupTurns(
 *   [system, user, { role: 'assistant', content: null, toolCalls: [c1, c2] }, result1, result2],
 *   (m) => estimateMessageTokens(m),
 * );
 * turns.sizes;    // [1, 1, 3]
 * turns.unpinned; // [2]
 * ```
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
