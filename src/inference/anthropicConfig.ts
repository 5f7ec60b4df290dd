/**
 * Options of the native Anthropic provider, resolved once at construction (options first, then
 * `ANTHROPIC_*` from the environment) so a missing key fails at startup, not on the first call.
 */
import { ConfigurationError } from '../core/errors.ts';
import type { RetryOptions } from './retry.ts';
import type { PriceTable } from './usage.ts';
import { missingConfigurationError } from './errors.ts';

/** Anthropic's API, and the model used when neither the options nor ANTHROPIC_MODEL name one. */
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
export const DEFAULT_ANTHROPIC_MODEL = 'claude-sonnet-5-5';
/** The Messages API requires `max_tokens`; this is sent when neither the agent nor the call sets one. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

export interface AnthropicOptions {
  /** Default model (per-call `model` overrides it). Env: ANTHROPIC_MODEL. */
  readonly model?: string;
  /** Env: ANTHROPIC_API_KEY. Never appears in errors, events or logs of ours. */
  readonly apiKey?: string;
  /** A gateway or proxy that speaks the Messages API. Env: ANTHROPIC_BASE_URL. */
  readonly baseURL?: string;
  /** `max_tokens` when the request sets none (default DEFAULT_ANTHROPIC_MAX_TOKENS). */
  readonly maxTokens?: number;
  /**
   * Extended thinking: the model reasons (up to `budgetTokens`, at least 1024) before it answers.
   * The reasoning comes back as `reasoning` on the completion and on the assistant message, never
   * as text, and is sent back signed on the next call as Anthropic requires with tools.
   * `max_tokens` must exceed the budget; the default becomes budget + DEFAULT_ANTHROPIC_MAX_TOKENS.
   * `'adaptive'` lets models that support it decide how much to think (`thinking: { type: 'adaptive' }`),
   * with a default `max_tokens` of 4 × DEFAULT_ANTHROPIC_MAX_TOKENS. Whatever is set here, thinking a
   * model returns on its own is kept and sent back the same way.
   */
  readonly thinking?: { readonly budgetTokens: number } | 'adaptive';
  /**
   * Mark the system prompt and the tool definitions as a prompt-cache breakpoint
   * (`cache_control: { type: 'ephemeral' }`), so repeated calls of a run read them from the
   * cache at a tenth of the input price. Default true; `false` sends no cache markers.
   */
  readonly promptCaching?: boolean;
  /** Time allowed for a whole reply, and for each gap between stream events, in ms (default 120 s). */
  readonly timeoutMs?: number;
  /** Extra request headers (an `anthropic-beta` flag, a gateway's routing header). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The retry policy of every call (see retry.ts); per-call `signal`/`onRetry` come from the request. */
  readonly retry?: Omit<RetryOptions, 'signal' | 'onRetry' | 'shouldRetry'>;
  /**
   * Prices for `costUsd`, added to (or overriding) DEFAULT_PRICES on Anthropic's own endpoint.
   * Behind another `baseURL` (a gateway or proxy) these are the only prices.
   */
  readonly prices?: PriceTable;
  /** Provider name (default `anthropic`). */
  readonly name?: string;
  /** A custom fetch (proxies, instrumentation, tests). */
  readonly fetch?: typeof fetch;
  /** Environment to read instead of `process.env`. */
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

/**
 * Options + environment → one configuration. Throws ConfigurationError (missing_configuration) without a key,
 * ConfigurationError for impossible token numbers.
 *
 * @example
 * ```ts
 * resolveAnthropicConfig({ thinking: { budgetTokens: 2048 } }, { ANTHROPIC_API_KEY: 'sk-ant-…' });
 * // { name: 'anthropic', model: 'claude-sonnet-5-5', maxTokens: 6144, thinkingBudget: 2048, adaptiveThinking: false, promptCaching: true, … }
 * ```
 */
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
