/**
 * On a context-length error the request is compacted to a smaller target and sent once more; the target then holds
 * for the rest of the run. It is in estimated tokens: the reported window scaled by how the two counts compare.
 */
import type { Message } from '../core/messages.ts';
import type { PreparerContext, MessagePreparer } from '../core/hooks.ts';
import type { LoopEvent } from '../core/loopEvent.ts';
import type { ContextLengthDetails } from '../core/provider.ts';

type Overflow = ContextLengthDetails & { readonly message: string };
import { createContextBudget, type ContextBudgetOptions } from './budget.ts';
import { createTokenCounter } from './estimate.ts';
import { defined } from '../core/defined.ts';

/** The share of the reported window a compacted request aims for: the estimate is not the server's tokenizer. */
export const OVERFLOW_MARGIN = 0.9;
/** The share of the failed request's estimate a compacted request aims for when the error reported no window. */
export const OVERFLOW_FALLBACK_RATIO = 0.5;
const KEPT_TARGETS = 16;

type Compacted = Extract<LoopEvent, { type: 'context.compacted' }>;
type Overflowed = Extract<LoopEvent, { type: 'context.overflowed' }>;

export interface OverflowCompaction {
  /** The messages under `limit` (estimated tokens), compacted only when they do not fit. */
  fit(messages: readonly Message[], limit: number, context: PreparerContext): Promise<readonly Message[]>;
  /** `undefined` when compaction cannot make the failed request smaller (the error stands). */
  afterOverflow(
    error: Overflow,
    messages: readonly Message[],
    context: PreparerContext,
  ): Promise<{ readonly messages: readonly Message[]; readonly limit: number; readonly event: Overflowed } | undefined>;
}

/** E.g. window 4097, prompt 3120 + completion 1000 reported, estimate 3000: floor(3097 × 3000/3120 × 0.9) = 2680. */
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

/** The budget's strategy, tokenizer and summariser are used; its `tokenBudget` is replaced by the target. */
export function createOverflowCompaction(budget: ContextBudgetOptions = {}): OverflowCompaction {
  const tokensOf = createTokenCounter({
    ...defined({ tokenizer: budget.tokenizer, messageOverheadTokens: budget.messageOverheadTokens }),
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
        ...defined({ limitTokens: error.limitTokens }),
        messagesRemoved: compacted.messagesRemoved,
        reason: error.message,
      };
      return { messages: view, limit, event };
    },
  };
}
