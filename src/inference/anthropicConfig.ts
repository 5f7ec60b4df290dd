/** Resolved once at construction so a missing key fails at startup, not on the first call. */
import { ConfigurationError } from '../core/errors.ts';
import type { RetryOptions } from './retry.ts';
import type { PriceTable } from './usage.ts';
import { missingConfigurationError } from './errors.ts';

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
export const DEFAULT_ANTHROPIC_MODEL = 'claude-sonnet-5-5';
/** The Messages API requires `max_tokens`. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

export interface AnthropicOptions {
  readonly model?: string;
  readonly apiKey?: string;
  readonly baseURL?: string;
  readonly maxTokens?: number;
  /** Reasoning is sent back signed on the next call, as Anthropic requires with tools. */
  readonly thinking?: { readonly budgetTokens: number } | 'adaptive';
  /** Caches system prompt and tools at a tenth of the input price. Default true. */
  readonly promptCaching?: boolean;
  readonly timeoutMs?: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly retry?: Omit<RetryOptions, 'signal' | 'onRetry' | 'shouldRetry'>;
  /** Behind another `baseURL` these are the only prices. */
  readonly prices?: PriceTable;
  readonly name?: string;
  readonly fetch?: typeof fetch;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface ResolvedAnthropicConfig {
  readonly name: string;
  readonly apiKey: string;
  readonly baseURL: string;
  readonly model: string;
  readonly maxTokens: number;
  readonly thinkingBudget: number | undefined;
  readonly adaptiveThinking: boolean;
  readonly promptCaching: boolean;
}

export function resolveAnthropicConfig(
  options: AnthropicOptions = {},
  env: Readonly<Record<string, string | undefined>> = process.env,
): ResolvedAnthropicConfig {
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const apiKey = options.apiKey?.trim() || read('ANTHROPIC_API_KEY');
  if (apiKey === undefined) throw missingConfigurationError({ provider: 'anthropic' });
  const adaptiveThinking = options.thinking === 'adaptive';
  const thinkingBudget = options.thinking === undefined || options.thinking === 'adaptive' ? undefined : options.thinking.budgetTokens;
  if (thinkingBudget !== undefined && !(Number.isInteger(thinkingBudget) && thinkingBudget >= 1024)) {
    throw new ConfigurationError(`anthropic(): thinking.budgetTokens must be an integer of at least 1024 (got ${String(thinkingBudget)}).`);
  }
  const maxTokens = options.maxTokens ?? (adaptiveThinking ? 4 * DEFAULT_ANTHROPIC_MAX_TOKENS : (thinkingBudget ?? 0) + DEFAULT_ANTHROPIC_MAX_TOKENS);
  if (!(Number.isInteger(maxTokens) && maxTokens > 0)) {
    throw new ConfigurationError(`anthropic(): maxTokens must be a positive integer (got ${String(maxTokens)}).`);
  }
  if (thinkingBudget !== undefined && maxTokens <= thinkingBudget) {
    throw new ConfigurationError(`anthropic(): maxTokens (${maxTokens}) must exceed thinking.budgetTokens (${thinkingBudget}); Anthropic counts the thinking inside max_tokens.`);
  }
  return {
    name: options.name ?? 'anthropic',
    apiKey,
    baseURL: (options.baseURL ?? read('ANTHROPIC_BASE_URL') ?? ANTHROPIC_BASE_URL).replace(/\/+$/, ''),
    model: options.model ?? read('ANTHROPIC_MODEL') ?? DEFAULT_ANTHROPIC_MODEL,
    maxTokens,
    thinkingBudget,
    adaptiveThinking,
    promptCaching: options.promptCaching ?? true,
  };
}
