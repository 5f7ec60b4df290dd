/** Resolved once, at construction, so a missing configuration fails at startup rather than on the first model call. */
import type { ModelCapabilityTable } from './capabilities.ts';
import type { PriceTable } from './usage.ts';
import type { RetryOptions } from './retry.ts';
import { missingConfigurationError } from './errors.ts';

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';
export const OPENROUTER_BASE_URL = 'https://openrouter.ai/api/v1';
export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini';
export const DEFAULT_OPENROUTER_MODEL = 'openai/gpt-4o-mini';
/** Generous because local models on a CPU are slow; applies to a whole reply and to each gap between stream chunks. */
export const DEFAULT_TIMEOUT_MS = 120_000;
/** Local servers (Ollama, vLLM, llama.cpp) ignore the key, but the client must send one. */
const PLACEHOLDER_KEY = 'not-needed';

export interface OpenAICompatibleOptions {
  /** Env: OPENAI_MODEL / OPENROUTER_MODEL. */
  readonly model?: string;
  /** Env: OPENAI_BASE_URL. A base URL without a key is fine (local servers). */
  readonly baseURL?: string;
  /** Env: OPENAI_API_KEY (or OPENROUTER_API_KEY). */
  readonly apiKey?: string;
  readonly organization?: string;
  readonly timeoutMs?: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly retry?: Omit<RetryOptions, 'signal' | 'onRetry' | 'shouldRetry'>;
  /** On a `baseURL` other than OpenAI's or OpenRouter's these are the only prices. */
  readonly prices?: PriceTable;
  /** Keys are model ids, or prefixes ending in `*`. */
  readonly models?: ModelCapabilityTable;
  readonly name?: string;
  readonly fetch?: typeof fetch;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface ResolvedConfig {
  readonly name: string;
  readonly baseURL: string;
  readonly apiKey: string;
  readonly keyIsSecret: boolean;
  readonly model: string;
  readonly organization: string | null;
  readonly project: string | null;
}

export function resolveConfig(
  options: OpenAICompatibleOptions = {},
  env: Readonly<Record<string, string | undefined>> = process.env,
): ResolvedConfig {
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const openAIKey = options.apiKey ?? read('OPENAI_API_KEY');
  const openAIBase = options.baseURL ?? read('OPENAI_BASE_URL');
  const routerKey = read('OPENROUTER_API_KEY');

  if (openAIKey === undefined && openAIBase === undefined) {
    if (routerKey === undefined) throw missingConfigurationError();
    return {
      name: options.name ?? 'openrouter',
      baseURL: OPENROUTER_BASE_URL,
      apiKey: routerKey,
      keyIsSecret: true,
      model: options.model ?? read('OPENROUTER_MODEL') ?? DEFAULT_OPENROUTER_MODEL,
      // OpenAI organisation/project ids mean nothing to OpenRouter; do not leak them there.
      organization: options.organization ?? null,
      project: null,
    };
  }

  const baseURL = (openAIBase ?? OPENAI_BASE_URL).replace(/\/+$/, '');
  const isRouter = isOpenRouter(baseURL);
  const apiKey = openAIKey ?? (isRouter ? routerKey : undefined);
  const official = baseURL === OPENAI_BASE_URL;
  return {
    name: options.name ?? (isRouter ? 'openrouter' : 'openai-compatible'),
    baseURL,
    apiKey: apiKey ?? PLACEHOLDER_KEY,
    keyIsSecret: apiKey !== undefined,
    model:
      options.model ??
      (isRouter ? (read('OPENROUTER_MODEL') ?? read('OPENAI_MODEL') ?? DEFAULT_OPENROUTER_MODEL) : (read('OPENAI_MODEL') ?? DEFAULT_OPENAI_MODEL)),
    organization: options.organization ?? (official ? (read('OPENAI_ORG_ID') ?? null) : null),
    project: official ? (read('OPENAI_PROJECT_ID') ?? null) : null,
  };
}

/** OpenRouter passes on the vendors' prices; a local server or another gateway bills its own, or nothing. */
export function billsListPrices(baseURL: string): boolean {
  return baseURL === OPENAI_BASE_URL || isOpenRouter(baseURL);
}

function isOpenRouter(baseURL: string): boolean {
  try {
    return new URL(baseURL).hostname === 'openrouter.ai';
  } catch {
    return false;
  }
}
