/**
 * Compacts only the view sent to the model, and only when it is over budget. A call and its results go together;
 * system messages, the first and latest user message and the newest turn always stay.
 */
import type { Message } from '../core/messages.ts';
import { DEFAULTS } from '../core/defaults.ts';
import { ConfigurationError } from '../core/errors.ts';
import type { InferenceProvider } from '../core/provider.ts';
import type { MessagePreparer } from '../core/hooks.ts';
import { applyAnchoredSummary, type SummaryState } from './anchored.ts';
import { createTokenCounter, type Tokenizer } from './estimate.ts';
import { fitToBudget } from './fit.ts';
import { createMasker } from './mask.ts';
import { requestSummary, summaryMessage, type SummaryRequestOptions } from './summary.ts';
import { defined } from '../core/defined.ts';

export type ContextStrategy = 'slidingWindow' | 'observationMasking' | 'anchoredSummary';

interface CommonBudgetOptions {
  /** Tokens the view may take, by the estimator. Default `DEFAULTS.context.tokenBudget` (32 000). */
  readonly tokenBudget?: number;
  /** Recent turns (a call with its results is one) never masked, and kept verbatim beside a summary. Default 4. */
  readonly keepRecent?: number;
  /** Exact token count of a text; default UTF-8 bytes/4 rounded up. */
  readonly tokenizer?: Tokenizer;
  readonly messageOverheadTokens?: number;
}

export interface AnchoredSummaryOptions extends SummaryRequestOptions {
  /** Consecutive summariser failures after which the run only masks and drops. Default 3. */
  readonly maxFailures?: number;
  /** A new summary brings the view under this fraction of the budget. Default 0.6. */
  readonly targetRatio?: number;
}

/** `observationMasking` (default) replaces old tool results with a marker before dropping turns; `anchoredSummary` summarises the middle first. */
export type ContextBudgetOptions =
  | (CommonBudgetOptions & { readonly strategy?: 'slidingWindow' | 'observationMasking' })
  | (CommonBudgetOptions & {
      readonly strategy: 'anchoredSummary';
      /** The model that writes summaries (often a cheaper one than the agent's). */
      readonly summarizer: InferenceProvider;
      readonly summary?: AnchoredSummaryOptions;
    });

/** Per-run state is kept for this many runs (least recently used dropped): preparers outlive runs. */
const RUN_STATES = 256;

/** Emits `context.compacted` on every step whose view it changed. */
export function createContextBudget(options: ContextBudgetOptions = {}): MessagePreparer {
  const strategy = check(options);
  const budget = options.tokenBudget ?? DEFAULTS.context.tokenBudget;
  const keepRecent = options.keepRecent ?? DEFAULTS.context.keepRecent;
  const overhead = options.messageOverheadTokens ?? DEFAULTS.context.messageOverheadTokens;
  const tokensOf = createTokenCounter({
    messageOverheadTokens: overhead,
    ...defined({ tokenizer: options.tokenizer }),
  });
  const maskedOf = createMasker();
  const runs = new Map<string, SummaryState>();
  const stateOf = (runId: string): SummaryState => {
    let state = runs.get(runId);
    if (state !== undefined) runs.delete(runId);
    else if (runs.size >= RUN_STATES) runs.delete(runs.keys().next().value as string);
    state ??= { failures: 0 };
    runs.set(runId, state);
    return state;
  };
  const summarise =
    options.strategy === 'anchoredSummary'
      ? anchoredStep(options.summarizer, options.summary ?? {}, { budget, keepRecent, overhead, tokensOf })
      : undefined;

  return async (messages, context) => {
    let before = 0;
    for (const message of messages) before += tokensOf(message);
    if (before <= budget) return messages;
    const stages: string[] = [];
    let view = messages;
    if (summarise !== undefined) {
      const result = await summarise(messages, stateOf(context.runId), context.signal);
      if (result.summarised) stages.push('anchoredSummary');
      view = result.messages;
    }
    const fitted = fitToBudget(view, { budget, tokensOf, mask: strategy !== 'slidingWindow', keepRecent, maskedOf });
    if (fitted.masked > 0) stages.push('observationMasking');
    if (fitted.dropped > 0) stages.push('slidingWindow');
    if (stages.length === 0) return messages;
    context.emit({
      type: 'context.compacted',
      strategy: stages.join('+'),
      tokensBefore: before,
      tokensAfter: fitted.tokens,
      messagesRemoved: removedCount(messages, fitted.messages),
    });
    return fitted.messages;
  };
}

function anchoredStep(
  summarizer: InferenceProvider,
  summary: AnchoredSummaryOptions,
  shared: { budget: number; keepRecent: number; overhead: number; tokensOf: (message: Message) => number },
) {
  const maxTokens = summary.maxTokens ?? DEFAULTS.context.summaryMaxTokens;
  const options = {
    budget: shared.budget,
    tokensOf: shared.tokensOf,
    keepRecent: shared.keepRecent,
    targetRatio: summary.targetRatio ?? DEFAULTS.context.summaryTargetRatio,
    reserveTokens: maxTokens + shared.overhead,
    maxFailures: summary.maxFailures ?? DEFAULTS.context.maxSummaryFailures,
    summarise: (previous: string | undefined, span: readonly Message[], signal: AbortSignal) =>
      requestSummary(summarizer, { messages: span, signal, ...defined({ previous }) }, { ...summary, maxTokens }),
    makeMessage: summaryMessage,
  };
  return (messages: readonly Message[], state: SummaryState, signal: AbortSignal) => applyAnchoredSummary(messages, state, options, signal);
}

/** Input messages that are not in the output as themselves (dropped, masked or summarised). */
function removedCount(input: readonly Message[], output: readonly Message[]): number {
  const kept = new Set(output);
  let removed = 0;
  for (const message of input) if (!kept.has(message)) removed++;
  return removed;
}

function check(options: ContextBudgetOptions): ContextStrategy {
  const fail = (problem: string): never => {
    throw new ConfigurationError(`createContextBudget: ${problem}`);
  };
  if (typeof options !== 'object' || options === null) fail('options must be an object, e.g. { strategy: "observationMasking", tokenBudget: 32000 }.');
  const strategy = options.strategy ?? 'observationMasking';
  if (strategy !== 'slidingWindow' && strategy !== 'observationMasking' && strategy !== 'anchoredSummary') {
    fail(`unknown strategy ${JSON.stringify(strategy)}; use "slidingWindow", "observationMasking" or "anchoredSummary".`);
  }
  const { tokenBudget, keepRecent, tokenizer, messageOverheadTokens } = options;
  if (tokenBudget !== undefined && !(Number.isFinite(tokenBudget) && tokenBudget > 0)) {
    fail(`tokenBudget must be a positive number of tokens (got ${String(tokenBudget)}).`);
  }
  if (keepRecent !== undefined && !(Number.isInteger(keepRecent) && keepRecent >= 1)) {
    fail(`keepRecent must be a whole number of turns, at least 1 (got ${String(keepRecent)}).`);
  }
  if (messageOverheadTokens !== undefined && !(Number.isFinite(messageOverheadTokens) && messageOverheadTokens >= 0)) {
    fail(`messageOverheadTokens must be a number ≥ 0 (got ${String(messageOverheadTokens)}).`);
  }
  if (tokenizer !== undefined && typeof tokenizer !== 'function') fail('tokenizer must be a function (text) => number of tokens.');
  if (options.strategy === 'anchoredSummary') {
    const { summarizer, summary } = options;
    if (typeof summarizer !== 'object' || summarizer === null || typeof summarizer.complete !== 'function') {
      fail('the anchoredSummary strategy needs `summarizer`, an InferenceProvider (e.g. openAICompatible({ model: "gpt-4o-mini" })).');
    }
    const ratio = summary?.targetRatio;
    if (ratio !== undefined && !(ratio > 0 && ratio <= 1)) fail(`summary.targetRatio must be in (0, 1] (got ${String(ratio)}).`);
    const max = summary?.maxFailures;
    if (max !== undefined && !(Number.isInteger(max) && max >= 0)) fail(`summary.maxFailures must be a whole number ≥ 0 (got ${String(max)}).`);
  }
  return strategy;
}
