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

export { anthropic } from './anthropic.ts';
export { ANTHROPIC_BASE_URL, DEFAULT_ANTHROPIC_MAX_TOKENS, DEFAULT_ANTHROPIC_MODEL, resolveAnthropicConfig } from './anthropicConfig.ts';
export type { AnthropicOptions, ResolvedAnthropicConfig } from './anthropicConfig.ts';
export { AnthropicStreamAssembler } from './anthropicStream.ts';
export { classifyAnthropicError } from './anthropicClassify.ts';
export type { DeltaEvent } from './streamAssembler.ts';
export { parseStructuredOutput, responseFormatFor } from './structuredOutput.ts';

export { AuthenticationError, ContextLengthError, InferenceError, missingConfigurationError, RateLimitError, StructuredOutputError } from './errors.ts';
export type { InferenceErrorOptions, RateLimitErrorOptions, UpstreamError } from './errors.ts';
export { classifyError, classifyHttpError, redactSecrets } from './classify.ts';
export type { ClassifyContext } from './classify.ts';

export { isRetryable, retryDelay, withRetry } from './retry.ts';
export type { RetryOptions } from './retry.ts';
export { parseRetryAfter } from './retryAfter.ts';
export type { HeaderReader } from './retryAfter.ts';

export { DEFAULT_PRICES, UsageTracker, costOf, priceOf } from './usage.ts';
export type { ModelPrice, PriceTable } from './usage.ts';

export { createProviderRegistry } from './registry.ts';
export type { ProviderRegistry } from './registry.ts';
