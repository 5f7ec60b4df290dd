/**
 * Anchored summary, the bookkeeping side: which turns a summary covers, when a cached summary
 * still applies, and when to ask for a new one.
 *
 * The anchor is the pinned head (system messages, the first and latest user message). A
 * summary covers the oldest unpinned turns; the view is head + summary + the turns after it.
 * While that view fits, every step reuses the cached summary (no model call). When it no longer
 * fits, the summary rolls forward over more turns — enough to bring the view under
 * `targetRatio` of the budget, so the next summary is several steps away.
 */
import type { Message, SystemMessage } from '../core/messages.ts';
import { groupTurns, type Turns } from './turns.ts';

/** What one run remembers between steps. Holds no message objects (a WeakSet only identifies them). */
export interface SummaryState {
  summary?: {
    readonly text: string;
    readonly message: SystemMessage;
    /** The covered messages, by identity. */
    readonly covered: WeakSet<Message>;
    readonly coveredMessages: number;
    readonly coveredTurns: number;
  };
  /** Consecutive summariser failures. */
  failures: number;
}

export interface AnchoredOptions {
  readonly budget: number;
  readonly tokensOf: (message: Message) => number;
  /** Most recent unpinned turns kept verbatim when a new summary is made (fewer if they do not fit). */
  readonly keepRecent: number;
  /** A new summary brings the view under `budget * targetRatio` (when the newest turn allows it). */
  readonly targetRatio: number;
  /** Tokens reserved for the summary message itself when choosing what to cover. */
  readonly reserveTokens: number;
  /** After this many consecutive failures the run stops asking. */
  readonly maxFailures: number;
  readonly summarise: (previous: string | undefined, span: readonly Message[], signal: AbortSignal) => Promise<string>;
  readonly makeMessage: (text: string, coveredMessages: number) => SystemMessage;
}

export interface AnchoredResult {
  readonly messages: readonly Message[];
  /** A summary stands in the view (cached or new). */
  readonly summarised: boolean;
  /** The summariser was called this step (successfully or not). */
  readonly called: boolean;
}

/**
 * Apply (and if needed roll) the run's summary. Abort errors propagate; any other summariser
 * failure is counted and the step goes on with the last good summary, if one still applies.
 *
 * @example
 * ```ts
 * const state: SummaryState = { failures: 0 };
 * const { messages: view } = await applyAnchoredSummary(messages, state, options, signal);
 * ```
 */
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

/**
 * How many of the oldest unpinned turns the run's summary covers in this conversation: all of
 * `coveredTurns` when exactly their messages are the ones it summarised, else 0 (the
 * conversation changed under it; the summary no longer applies).
 */
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
