/**
 * A summary covers the oldest unpinned turns and is reused while the view fits; when it no longer fits it rolls
 * forward far enough to bring the view under `targetRatio` of the budget, so the next one is several steps away.
 */
import type { Message, SystemMessage } from '../core/messages.ts';
import { groupTurns, type Turns } from './turns.ts';

/** What one run remembers between steps. Holds no message objects (a WeakSet only identifies them). */
export interface SummaryState {
  summary?: {
    readonly text: string;
    readonly message: SystemMessage;
    readonly covered: WeakSet<Message>;
    readonly coveredMessages: number;
    readonly coveredTurns: number;
  };
  failures: number;
}

export interface AnchoredOptions {
  readonly budget: number;
  readonly tokensOf: (message: Message) => number;
  /** Most recent unpinned turns kept verbatim when a new summary is made (fewer if they do not fit). */
  readonly keepRecent: number;
  readonly targetRatio: number;
  /** Tokens reserved for the summary message itself when choosing what to cover. */
  readonly reserveTokens: number;
  readonly maxFailures: number;
  readonly summarise: (previous: string | undefined, span: readonly Message[], signal: AbortSignal) => Promise<string>;
  readonly makeMessage: (text: string, coveredMessages: number) => SystemMessage;
}

export interface AnchoredResult {
  readonly messages: readonly Message[];
  readonly summarised: boolean;
  readonly called: boolean;
}

/** Abort errors propagate; any other summariser failure is counted and the step goes on with the last good summary, if it still applies. */
export async function applyAnchoredSummary(
  messages: readonly Message[],
  state: SummaryState,
  options: AnchoredOptions,
  signal: AbortSignal,
): Promise<AnchoredResult> {
  const turns = groupTurns(messages, options.tokensOf);
  const { unpinned, tokens } = turns;
  const rank = new Int32Array(turns.pinned.length).fill(-1);
  for (let k = 0; k < unpinned.length; k++) rank[unpinned[k] as number] = k;

  let covered = coveredPrefix(messages, turns, rank, state);
  if (covered === 0) delete state.summary;
  const summary = state.summary;
  if (summary !== undefined) {
    let coveredTokens = 0;
    for (let k = 0; k < covered; k++) coveredTokens += tokens[unpinned[k] as number] as number;
    const withCached = turns.total - coveredTokens + options.tokensOf(summary.message);
    if (withCached <= options.budget) return { messages: replaceSpan(messages, turns, rank, covered, summary.message), summarised: true, called: false };
  }

  let called = false;
  if (state.failures < options.maxFailures) {
    let head = turns.total;
    for (const turn of unpinned) head -= tokens[turn] as number;
    let end = Math.max(covered, unpinned.length - options.keepRecent);
    let rest = 0;
    for (let k = end; k < unpinned.length; k++) rest += tokens[unpinned[k] as number] as number;
    const target = options.budget * options.targetRatio;
    // The newest turn is never summarised: it holds the results the model has not seen yet.
    while (end < unpinned.length - 1 && head + options.reserveTokens + rest > target) {
      rest -= tokens[unpinned[end] as number] as number;
      end++;
    }
    end = Math.min(end, unpinned.length - 1);
    if (end > covered) {
      const span: Message[] = [];
      const all = new WeakSet<Message>();
      let count = 0;
      for (let i = 0; i < messages.length; i++) {
        const r = rank[turns.turnOf[i] as number] as number;
        if (r < 0 || r >= end) continue;
        const message = messages[i] as Message;
        all.add(message);
        count++;
        if (r >= covered) span.push(message);
      }
      called = true;
      try {
        const text = await options.summarise(summary?.text, span, signal);
        state.summary = { text, message: options.makeMessage(text, count), covered: all, coveredMessages: count, coveredTurns: end };
        state.failures = 0;
        covered = end;
      } catch {
        // Cancellation is not the summariser failing: let the run end as cancelled.
        if (signal.aborted) throw signal.reason;
        state.failures++;
      }
    }
  }
  const current = state.summary;
  if (current === undefined || covered === 0) return { messages, summarised: false, called };
  return { messages: replaceSpan(messages, turns, rank, covered, current.message), summarised: true, called };
}

/** Covered turns, or 0 when the conversation changed under the summary so it no longer applies. */
function coveredPrefix(messages: readonly Message[], turns: Turns, rank: Int32Array, state: SummaryState): number {
  const summary = state.summary;
  if (summary === undefined || summary.coveredTurns > turns.unpinned.length) return 0;
  let inTurns = 0;
  for (let k = 0; k < summary.coveredTurns; k++) inTurns += turns.sizes[turns.unpinned[k] as number] as number;
  if (inTurns !== summary.coveredMessages) return 0;
  for (let i = 0; i < messages.length; i++) {
    const r = rank[turns.turnOf[i] as number] as number;
    if (r >= 0 && r < summary.coveredTurns && !summary.covered.has(messages[i] as Message)) return 0;
  }
  return summary.coveredTurns;
}

/** The conversation with the oldest `covered` unpinned turns replaced by `stand` at the first one's place. */
function replaceSpan(messages: readonly Message[], turns: Turns, rank: Int32Array, covered: number, stand: Message): Message[] {
  const out: Message[] = [];
  let placed = false;
  for (let i = 0; i < messages.length; i++) {
    const r = rank[turns.turnOf[i] as number] as number;
    if (r >= 0 && r < covered) {
      if (!placed) out.push(stand);
      placed = true;
      continue;
    }
    out.push(messages[i] as Message);
  }
  return out;
}
