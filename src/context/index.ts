export { createContextBudget } from './budget.ts';
export type { AnchoredSummaryOptions, ContextBudgetOptions, ContextStrategy } from './budget.ts';
export { createTokenCounter, estimateMessageTokens, estimateTokens } from './estimate.ts';
export type { EstimateOptions, Tokenizer } from './estimate.ts';
export { MASKED_RESULT_PREFIX, maskedResultText } from './mask.ts';
export { SUMMARY_TAG } from './summary.ts';
export type { SummaryRequestOptions } from './summary.ts';
