/**
 * What a run does when the model says its request is over the context window: the request's
 * messages are compacted by the context budget machinery (the agent's budget options, or the
 * default observation masking) to a smaller target, and sent once more. The target then holds
 * for the rest of the run, so later requests do not overflow again.
 *
 * The target is in the budget's estimated tokens: the window the error reported, scaled by how
 * the estimate and the server counted the same prompt, less a margin; without a reported
 * window, half the estimate of the request that failed.
 */
import type { Message } from '../core/messages.ts';
import type { PreparerContext, MessagePreparer } from '../core/hooks.ts';
import type { LoopEvent } from '../core/loopEvent.ts';
import type { ContextLengthDetails } from '../core/provider.ts';

/** A context-length error as compaction reads it: its sizes and what it said. */
type Overflow = ContextLengthDetails & { readonly message: string };
import { createContextBudget, type ContextBudgetOptions } from './budget.ts';
import { createTokenCounter } from './estimate.ts';

/** The share of the reported window a compacted request aims for: the estimate is not the server's tokenizer. */
export const OVERFLOW_MARGIN = 0.9;
/** The share of the failed request's estimate a compacted request aims for when the error reported no window. */
export const OVERFLOW_FALLBACK_RATIO = 0.5;
/** Compaction preparers kept per learned limit (a run learns one or two). */
const KEPT_TARGETS = 16;

type Compacted = Extract<LoopEvent, { type: 'context.compacted' }>;
type Overflowed = Extract<LoopEvent, { type: 'context.overflowed' }>;

/** What the reason phase asks of the overflow policy (see {@link createOverflowCompaction}). */
export interface OverflowCompaction {
  /**
   * The messages under `limit` (estimated tokens): as they are when they fit, else compacted,
   * with the usual `context.compacted` event.
   */
  fit(messages: readonly Message[], limit: number, context: PreparerContext): Promise<readonly Message[]>;
  /**
   * After `error`, the messages of the request that failed compacted under a smaller target, the
   * target (the run's limit from now on) and the event that says so; `undefined` when compaction
   * cannot make the request smaller (the error stands).
   */
  afterOverflow(
    error: Overflow,
    messages: readonly Message[],
    context: PreparerContext,
  ): Promise<{ readonly messages: readonly Message[]; readonly limit: number; readonly event: Overflowed } | undefined>;
}

/**
 * The target, in estimated tokens, for a request estimated at `estimated` that failed with `error`.
 *
 * @example
 * ```ts
 * // "maximum context length is 4097 tokens … you requested 4120 tokens (3120 in the messages, 1000 in the completion)"
 * overflowTarget({ limitTokens: 4097, promptTokens: 3120, completionTokens: 1000 }, 3000); // floor(3097 × 3000/3120 × 0.9) = 2680
 * ```
 */
export function overflowTarget(error: ContextLengthDetails, estimated: number): number {
  const { limitTokens, promptTokens, completionTokens } = error;
  let target: number | undefined;
  if (limitTokens !== undefined) {
    const room = limitTokens - (completionTokens ?? 0);
    // The server's tokens in the estimate's: the two counts of the same prompt give the rate.
    const rate = promptTokens !== undefined && promptTokens > 0 ? estimated / promptTokens : 1;
    if (room > 0) target = Math.floor(room * rate * OVERFLOW_MARGIN);
  }
  if (target === undefined || target >= estimated) target = Math.floor(estimated * OVERFLOW_FALLBACK_RATIO);
  return Math.max(1, target);
}

/**
 * The overflow policy of an agent whose context budget options are `budget` (its strategy,
 * tokenizer and summariser are used; its `tokenBudget` is replaced by the target).
 *
 * @example
 * ```ts
 * const overflow = createOverflowCompaction({ strategy: 'observationMasking' });
 * const retry = await overflow.afterOverflow(error, request.messages, context);
 * if (retry !== undefined) send({ ...request, messages: retry.messages });
 * ```
 */
export function createOverflowCompaction(budget: ContextBudgetOptions = {}): OverflowCompaction {
  const tokensOf = createTokenCounter({
    ...(budget.tokenizer === undefined ? {} : { tokenizer: budget.tokenizer }),
    ...(budget.messageOverheadTokens === undefined ? {} : { messageOverheadTokens: budget.messageOverheadTokens }),
  });
  const preparers = new Map<number, MessagePreparer>();
  const preparerFor = (target: number): MessagePreparer => {
    let preparer = preparers.get(target);
    if (preparer === undefined) {
      if (preparers.size >= KEPT_TARGETS) preparers.delete(preparers.keys().next().value as number);
      preparer = createContextBudget({ ...budget, tokenBudget: target });
      preparers.set(target, preparer);
    }
    return preparer;
  };
  const estimate = (messages: readonly Message[]): number => {
    let tokens = 0;
    for (const message of messages) tokens += tokensOf(message);
    return tokens;
  };
  return {
    async fit(messages, limit, context) {
      return preparerFor(limit)(messages, context);
    },
    async afterOverflow(error, messages, context) {
      const before = estimate(messages);
      const limit = overflowTarget(error, before);
      let compacted: Compacted | undefined;
      // The compaction is reported once, as part of the overflow event.
      const quiet: PreparerContext = {
        ...context,
        emit: (event) => {
          if (event.type === 'context.compacted') compacted = event;
          else context.emit(event);
        },
      };
      const view = await preparerFor(limit)(messages, quiet);
      if (compacted === undefined || compacted.tokensAfter >= before) return undefined;
      const event: Overflowed = {
        type: 'context.overflowed',
        strategy: compacted.strategy,
        tokensBefore: before,
        tokensAfter: compacted.tokensAfter,
        targetTokens: limit,
        ...(error.limitTokens === undefined ? {} : { limitTokens: error.limitTokens }),
        messagesRemoved: compacted.messagesRemoved,
        reason: error.message,
      };
      return { messages: view, limit, event };
    },
  };
}
