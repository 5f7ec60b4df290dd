/**
 * Context budget: keep the conversation the model sees within a token budget.
 *
 * @example
 * ```ts
 * import { createContextBudget, estimateTokens } from './context/index.ts';
 * const agent = createAgent({ model, context: { budget: { tokenBudget: 16_000 } } });
 * const view = await createContextBudget({ tokenBudget: 16_000 })(messages, context); // what the model would see
 * estimateTokens(result.messages); // what the full conversation would cost
 * ```
 */
export { createContextBudget } from './budget.ts';
export type { AnchoredSummaryOptions, ContextBudgetOptions, ContextStrategy } from './budget.ts';
export { createTokenCounter, estimateMessageTokens, estimateTokens } from './estimate.ts';
export type { EstimateOptions, Tokenizer } from './estimate.ts';
export { MASKED_RESULT_PREFIX, maskedResultText } from './mask.ts';
export { SUMMARY_TAG } from './summary.ts';
export type { SummaryRequestOptions } from './summary.ts';
