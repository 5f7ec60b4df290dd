/**
 * Where an OpenAI-compatible provider points and with which key: explicit options first, then
 * the environment (`OPENAI_*`, then `OPENROUTER_*`). Resolved once, at construction, so a
 * missing configuration fails at startup rather than on the first model call.
 */
import type { ModelCapabilityTable } from './capabilities.ts';
import type { PriceTable } from './usage.ts';
import type { RetryOptions } from './retry.ts';
import { missingConfigurationError } from './errors.ts';

/**
 * Endpoints and defaults of `openAICompatible`.
 *
 * @example
 * ```ts
 * openAICompatible({ baseURL: OPENROUTER_BASE_URL, apiKey: process.env.OPENROUTER_API_KEY, model: DEFAULT_OPENROUTER_MODEL });
 * ```
 */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';
export const OPENROUTER_BASE_URL = 'https://openrouter.ai/api/v1';
/** Model used when neither the options nor the environment name one. */
export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini';
/** OpenRouter ids are namespaced by vendor. */
export const DEFAULT_OPENROUTER_MODEL = 'openai/gpt-4o-mini';
/**
 * Time allowed for a whole non-streamed reply, and for each gap between stream chunks, in ms.
 * Generous because local models on a CPU are slow; cut it for interactive use.
 */
export const DEFAULT_TIMEOUT_MS = 120_000;
/** Local servers (Ollama, vLLM, llama.cpp) ignore the key, but the client must send one. */
const PLACEHOLDER_KEY = 'not-needed';

export interface OpenAICompatibleOptions {
  /** Default model of the provider (per-call `model` overrides it). Env: OPENAI_MODEL / OPENROUTER_MODEL. */
  readonly model?: string;
  /** Env: OPENAI_BASE_URL. A base URL without a key is fine (local servers). */
  readonly baseURL?: string;
  /** Env: OPENAI_API_KEY (or OPENROUTER_API_KEY). Never appears in errors or logs of ours. */
  readonly apiKey?: string;
  readonly organization?: string;
  /** See DEFAULT_TIMEOUT_MS. */
  readonly timeoutMs?: number;
  /** Extra request headers (OpenRouter's `HTTP-Referer`, `X-Title`, a gateway's routing header). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The retry policy of every call (see retry.ts); per-call `signal`/`onRetry` come from the request. */
  readonly retry?: Omit<RetryOptions, 'signal' | 'onRetry' | 'shouldRetry'>;
  /**
   * Prices for `costUsd`, added to (or overriding) DEFAULT_PRICES on OpenAI's and OpenRouter's
   * endpoints. On any other `baseURL` these are the only prices: a known model name there is not
   * billed at OpenAI's list price, so its calls have no cost unless priced here.
   */
  readonly prices?: PriceTable;
  /**
   * What models accept, added to (or overriding) DEFAULT_MODEL_CAPABILITIES: which field caps the
   * reply, whether `temperature` and `reasoning_effort` are sent, whether reasoning goes back.
   * Keys are model ids, or prefixes ending in `*`.
   */
  readonly models?: ModelCapabilityTable;
  /** Provider name; default `openrouter` for OpenRouter, else `openai-compatible`. */
  readonly name?: string;
  /** A custom fetch (proxies, instrumentation, tests). */
  readonly fetch?: typeof fetch;
  /** Environment to read instead of `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface ResolvedConfig {
  readonly name: string;
  readonly baseURL: string;
  readonly apiKey: string;
  /** False for the placeholder key: nothing to redact. */
  readonly keyIsSecret: boolean;
  readonly model: string;
  readonly organization: string | null;
  readonly project: string | null;
}

/**
 * Resolve options + environment into one configuration, or throw ConfigurationError (missing_configuration).
 *
 * @example
 * ```ts
 * resolveConfig({}, { OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1', OPENAI_MODEL: 'llama3.2' });
 * // { name: 'openai-compatible', baseURL: 'http://127.0.0.1:11434/v1', apiKey: 'not-needed', model: 'llama3.2', ... }
 * ```
 */
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

/**
 * Whether an endpoint bills the list prices of DEFAULT_PRICES: OpenAI's own, and OpenRouter
 * (which passes on the vendors' prices). A local server or another gateway serving a model under
 * a known name bills its own, or nothing.
 *
 * @example
 * ```ts
 * billsListPrices('https://api.openai.com/v1'); // true
 * billsListPrices('http://127.0.0.1:11434/v1'); // false
 * ```
 */
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
