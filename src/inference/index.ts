/**
 * Inference: the provider contract, the OpenAI-compatible and Anthropic providers, their errors, the retry
 * policy, usage/cost tracking and the provider registry.
 *
 * @example
 * ```ts
 * import { openAICompatible, UsageTracker } from './inference/index.ts';
 * const model = openAICompatible();
 * const usage = new UsageTracker();
 * usage.add(await model.complete({ messages: [{ role: 'user', content: 'hi' }] }));
 * ```
 */

// The contract
export { ZERO_USAGE, addUsage } from '../core/provider.ts';
export type {
  Completion,
  CompletionRequest,
  FinishReason,
  InferenceProvider,
  ReasoningEffort,
  RetryInfo,
  StreamEvent,
  StructuredOutputSpec,
  ToolChoice,
  ToolSpec,
  Usage,
} from '../core/provider.ts';

// The OpenAI-compatible provider
export { openAICompatible } from './openaiCompatible.ts';
export { DEFAULT_MODEL_CAPABILITIES, capabilitiesOf } from './capabilities.ts';
export type { ModelCapabilities, ModelCapabilityTable } from './capabilities.ts';
export {
  DEFAULT_OPENAI_MODEL,
  DEFAULT_OPENROUTER_MODEL,
  DEFAULT_TIMEOUT_MS,
  OPENAI_BASE_URL,
  OPENROUTER_BASE_URL,
  resolveConfig,
} from './config.ts';
export type { OpenAICompatibleOptions, ResolvedConfig } from './config.ts';
export { StreamAssembler } from './streamAssembler.ts';

// The Anthropic provider
export { anthropic } from './anthropic.ts';
export { ANTHROPIC_BASE_URL, DEFAULT_ANTHROPIC_MAX_TOKENS, DEFAULT_ANTHROPIC_MODEL, resolveAnthropicConfig } from './anthropicConfig.ts';
export type { AnthropicOptions, ResolvedAnthropicConfig } from './anthropicConfig.ts';
export { AnthropicStreamAssembler } from './anthropicStream.ts';
export { classifyAnthropicError } from './anthropicClassify.ts';
export type { DeltaEvent } from './streamAssembler.ts';
export { parseStructuredOutput, responseFormatFor } from './structuredOutput.ts';

// Errors
export { AuthenticationError, ContextLengthError, InferenceError, missingConfigurationError, RateLimitError, StructuredOutputError } from './errors.ts';
export type { InferenceErrorOptions, RateLimitErrorOptions, UpstreamError } from './errors.ts';
export { classifyError, classifyHttpError, redactSecrets } from './classify.ts';
export type { ClassifyContext } from './classify.ts';

// Retry policy
export { isRetryable, retryDelay, withRetry } from './retry.ts';
export type { RetryOptions } from './retry.ts';
export { parseRetryAfter } from './retryAfter.ts';
export type { HeaderReader } from './retryAfter.ts';

// Usage and cost
export { DEFAULT_PRICES, UsageTracker, costOf, priceOf } from './usage.ts';
export type { ModelPrice, PriceTable } from './usage.ts';

// Registry
export { createProviderRegistry } from './registry.ts';
export type { ProviderRegistry } from './registry.ts';
