/**
 * Typed errors of model calls. `classifyError` (classify.ts) turns whatever the `openai` client
 * or `fetch` threw into one of them: a class of its own where callers catch it by type
 * (credentials, rate limits, context length, structured output), else an `InferenceError`
 * whose `code` says what failed.
 *
 * Every error carries `retryable`: the retry policy (retry.ts) reads that flag and nothing else,
 * so "is this worth another attempt" is decided once, here, where the error is understood.
 * Messages never contain the API key: provider replies that echo it are redacted on the way in.
 */
import type { ContextLengthDetails } from '../core/provider.ts';
import type { z } from 'zod';
import { ActorloopError, ConfigurationError } from '../core/errors.ts';
import type { CodesOf } from '../core/errorCodes.ts';
import type { ActorloopErrorOptions } from '../core/errors.ts';
import type { Completion } from '../core/provider.ts';
import { defined } from '../core/defined.ts';

/** What the provider behind a gateway said (OpenRouter's `error.metadata`), secrets redacted. */
export interface UpstreamError {
  /** `metadata.provider_name`, e.g. `DeepSeek`. */
  readonly provider?: string;
  /** The upstream's own error message (read out of `metadata.raw`), or the raw text itself. */
  readonly message: string;
}

export interface InferenceErrorOptions extends ActorloopErrorOptions {
  /** HTTP status of the failed response, when there was one. */
  readonly status?: number;
  readonly upstream?: UpstreamError;
}

type InferenceCode =
  | CodesOf<'InferenceError'>
  | CodesOf<'AuthenticationError'>
  | CodesOf<'RateLimitError'>
  | CodesOf<'ContextLengthError'>
  | CodesOf<'StructuredOutputError'>;

interface InferenceErrorInit extends InferenceErrorOptions {
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
}

/**
 * Every error a model call can end with; `retryable` drives the retry policy. Instances of this
 * class itself carry one of `server_error`, `bad_request`, `system_message_refused`, `provider_timeout`, `network`,
 * `invalid_response`, `stream_interrupted`, `provider_unknown`, `model_call_cancelled`; the
 * static methods build each with its message.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof InferenceError && !e.retryable) throw e; }
 * catch (e) { if (e instanceof InferenceError && e.code === 'server_error') console.log(e.status); } // 503
 * ```
 */
export class InferenceError extends ActorloopError {
  declare readonly code: InferenceCode;
  readonly retryable: boolean;
  /** HTTP status of the failed response, when there was one. */
  readonly status: number | undefined;
  /** Behind a gateway (OpenRouter): what the upstream provider said, when the gateway passed it on. */
  readonly upstream: UpstreamError | undefined;
  /** Wait the server asked for (`retry-after-ms` / `retry-after`, on 429s and often 503s), in ms. */
  readonly retryAfterMs: number | undefined;

  constructor(code: InferenceCode, message: string, options: InferenceErrorInit) {
    super(code, message, options);
    this.retryable = options.retryable;
    this.status = options.status;
    this.upstream = options.upstream;
    this.retryAfterMs = options.retryAfterMs;
  }

  override toJSON(): ReturnType<ActorloopError['toJSON']> & { retryable: boolean; status?: number; upstream?: UpstreamError } {
    return {
      ...super.toJSON(),
      retryable: this.retryable,
      ...defined({ status: this.status, upstream: this.upstream }),
    };
  }

  /** `server_error`: 5xx, or an error event inside a stream (`status` undefined). Retried. */
  static server(detail: string, options: InferenceErrorOptions & { readonly retryAfterMs?: number } = {}): InferenceError {
    return new InferenceError(
      'server_error',
      `The provider failed (${options.status === undefined ? 'error inside the stream' : `HTTP ${options.status}`}): ${detail}. ` +
        'This is usually transient: retry later.',
      { ...options, retryable: true },
    );
  }

  /** `bad_request`: any other 4xx; the request itself is wrong (unknown model, unsupported parameter, bad base URL). Never retried. */
  static badRequest(detail: string, options: InferenceErrorOptions = {}): InferenceError {
    const hint =
      options.status === 404
        ? 'Check the model name and the base URL (OpenAI-compatible servers usually serve under /v1).'
        : 'Check the model name and the request parameters this server supports.';
    return new InferenceError('bad_request', `The provider rejected the request (HTTP ${options.status ?? 400}): ${detail}. ${hint}`, { ...options, retryable: false });
  }

  /** `system_message_refused`: the server's chat template raised on a system message that is not the first. Never retried as is. */
  static systemMessageRefused(detail: string, options: InferenceErrorOptions = {}): InferenceError {
    return new InferenceError(
      'system_message_refused',
      `The server's chat template takes one system message, at the start (HTTP ${options.status ?? 400}): ${detail}. ` +
        "Declare it for the model: openAICompatible({ models: { '<model>': { systemMessages: 'first' } } }).",
      { ...options, retryable: false },
    );
  }

  /** `provider_timeout`: no (complete) reply within the provider's `timeoutMs`. Retried. */
  static timeout(timeoutMs: number | undefined, options: InferenceErrorOptions = {}): InferenceError {
    return new InferenceError(
      'provider_timeout',
      `The provider did not answer within ${timeoutMs === undefined ? 'the timeout' : `${timeoutMs} ms`}. ` +
        'Retry, or raise `timeoutMs` for slow (e.g. local) models.',
      { ...options, retryable: true },
    );
  }

  /** `network`: the connection failed (refused, reset, DNS). Retried. */
  static network(detail: string, options: InferenceErrorOptions = {}): InferenceError {
    return new InferenceError(
      'network',
      `Could not reach the provider: ${detail}. Check the network and that the server at the base URL is running.`,
      { ...options, retryable: true },
    );
  }

  /**
   * `invalid_response`: the reply could not be understood (unparseable JSON, no `choices`).
   * Retried: in practice a garbled body comes from a proxy or a truncated transfer.
   */
  static invalidResponse(detail: string, options: InferenceErrorOptions = {}): InferenceError {
    return new InferenceError('invalid_response', `The provider sent a reply that is not a valid chat completion: ${detail}.`, { ...options, retryable: true });
  }

  /**
   * `stream_interrupted`: a stream broke before its finish reason; partial text and tool calls
   * were not returned. Retryable only when nothing had been yielded yet (the provider then
   * retries itself); after the first delta the caller decides, since it has seen the deltas.
   */
  static streamInterrupted(detail: string, options: InferenceErrorOptions & { readonly deltasYielded: boolean }): InferenceError {
    return new InferenceError(
      'stream_interrupted',
      `The reply stream ended before the model finished: ${detail.replace(/\.$/, '')}. The partial reply was discarded; ` +
        're-run the step.',
      { ...options, retryable: !options.deltasYielded },
    );
  }

  /** `provider_unknown`: something failed that no other code describes. Not retried; see `cause`. */
  static unknown(detail: string, options: InferenceErrorOptions = {}): InferenceError {
    return new InferenceError('provider_unknown', `The model call failed unexpectedly: ${detail}.`, { ...options, retryable: false });
  }

  /**
   * `model_call_cancelled`: the call was cancelled. The provider itself rejects with the caller's
   * `signal.reason` (like `fetch`); this is only what `classifyError` makes of an abort it finds on its own.
   */
  static cancelled(options: InferenceErrorOptions = {}): InferenceError {
    return new InferenceError('model_call_cancelled', 'The model call was cancelled.', { ...options, retryable: false });
  }
}

/**
 * 401/403: the key is missing, wrong, or lacks access. Never retried.
 *
 * @example
 * ```ts
 * if (error instanceof AuthenticationError) console.error(error.message); // "... Check OPENAI_API_KEY ..."
 * ```
 */
export class AuthenticationError extends InferenceError {
  declare readonly code: CodesOf<'AuthenticationError'>;
  /** `keyVariable`: the setting to check, named in the message (default OPENAI_API_KEY or OPENROUTER_API_KEY). */
  constructor(detail: string, options: InferenceErrorOptions & { readonly keyVariable?: string } = {}) {
    super(
      'authentication',
      `The provider refused the credentials (HTTP ${options.status ?? 401}): ${detail}. Check ${options.keyVariable ?? 'OPENAI_API_KEY (or OPENROUTER_API_KEY)'}: ` +
        'that it is set, valid for this base URL, and allowed to use the model.',
      { ...options, retryable: false },
    );
  }
}

export interface RateLimitErrorOptions extends InferenceErrorOptions {
  readonly retryAfterMs?: number;
  /** The account is out of quota/credits: waiting will not help, so not retryable. */
  readonly quotaExhausted?: boolean;
}

/**
 * 429: too many requests. Retried after the server's Retry-After when it sent one, except when
 * the account's quota is exhausted (`retryable: false`).
 *
 * @example
 * ```ts
 * if (error instanceof RateLimitError) console.log('server asked to wait', error.retryAfterMs);
 * ```
 */
export class RateLimitError extends InferenceError {
  declare readonly code: CodesOf<'RateLimitError'>;
  constructor(detail: string, options: RateLimitErrorOptions = {}) {
    super(
      'rate_limited',
      options.quotaExhausted === true
        ? `The provider account is out of quota (HTTP 429): ${detail}. Add credits or raise the limit; retrying will not help.`
        : `The provider is rate limiting requests (HTTP 429): ${detail}. Retry later, lower concurrency, or raise the limit.`,
      { ...options, status: 429, retryable: options.quotaExhausted !== true },
    );
  }
}

export type { ContextLengthDetails } from '../core/provider.ts';

/**
 * The conversation does not fit the model's context window. Never retried as is: the same
 * request fails the same way. An agent compacts the request once and tries again (see
 * `context.compactOnOverflow`); the sizes the server reported, if any, say how far.
 *
 * @example
 * ```ts
 * if (error instanceof ContextLengthError) console.log(error.limitTokens, error.promptTokens);
 * ```
 */
export class ContextLengthError extends InferenceError {
  declare readonly code: CodesOf<'ContextLengthError'>;
  readonly limitTokens: number | undefined;
  readonly promptTokens: number | undefined;
  readonly completionTokens: number | undefined;
  constructor(detail: string, options: InferenceErrorOptions & ContextLengthDetails = {}) {
    super(
      'context_length_exceeded',
      `The conversation is longer than the model's context window: ${detail}. Shorten the conversation, ` +
        'enable a context budget (sliding window, observation masking or summary), or use a model with a larger context.',
      { ...options, retryable: false },
    );
    this.limitTokens = options.limitTokens;
    this.promptTokens = options.promptTokens;
    this.completionTokens = options.completionTokens;
  }
}

/**
 * The reply was asked to match a schema and does not. Carries the zod issues and the raw text
 * so the loop can show the model what to fix. Not retried by the provider.
 *
 * @example
 * ```ts
 * if (error instanceof StructuredOutputError) console.log(error.issues, error.text);
 * ```
 */
export class StructuredOutputError extends InferenceError {
  declare readonly code: CodesOf<'StructuredOutputError'>;
  readonly issues: readonly z.core.$ZodIssue[];
  readonly schemaName: string;
  /** The model's raw reply (`null` when it sent no text). */
  readonly text: string | null;
  /** The whole reply (usage and cost included) when the call itself succeeded, so a caller can feed it back. */
  completion?: Completion;
  constructor(schemaName: string, issues: readonly z.core.$ZodIssue[], text: string | null, options: InferenceErrorOptions = {}) {
    const first = issues[0];
    const where = first === undefined || first.path.length === 0 ? '' : ` at ${first.path.join('.')}`;
    super(
      'structured_output',
      `The model's reply does not match the output schema "${schemaName}"${where}: ${first?.message ?? 'no reply'}` +
        `${issues.length > 1 ? ` (+${issues.length - 1} more)` : ''}. Feed the issues back to the model or relax the schema.`,
      { ...options, retryable: false },
    );
    this.issues = issues;
    this.schemaName = schemaName;
    this.text = text;
  }
}

/**
 * `missing_configuration`: neither an API key nor a base URL is configured. Thrown when the
 * provider is created; `variables` lists the environment variables that would fix it.
 *
 * @example
 * ```ts
 * try { openAICompatible(); } catch (e) { if (e instanceof ConfigurationError && e.code === 'missing_configuration') console.log(e.variables); }
 * ```
 */
export function missingConfigurationError(options: ActorloopErrorOptions & { readonly provider?: 'anthropic' } = {}): ConfigurationError {
  return new ConfigurationError(
    options.provider === 'anthropic'
      ? 'No Anthropic API key is configured. Set ANTHROPIC_API_KEY, or pass `apiKey` to anthropic() ' +
          '(with `baseURL` for a gateway that speaks the Messages API).'
      : 'No model provider is configured. Set OPENAI_API_KEY (OpenAI), or OPENAI_BASE_URL (a local ' +
          'OpenAI-compatible server such as Ollama, vLLM or llama.cpp; no key needed), or OPENROUTER_API_KEY ' +
          '(OpenRouter) — or pass `apiKey` / `baseURL` to openAICompatible().',
    {
      ...options,
      code: 'missing_configuration',
      variables: options.provider === 'anthropic' ? ['ANTHROPIC_API_KEY'] : ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENROUTER_API_KEY'],
    },
  );
}
