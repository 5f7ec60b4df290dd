/**
 * Typed errors of model calls. `classifyError` (classify.ts) turns whatever the `openai` client
 * or `fetch` threw into one of them.
 *
 * Every class carries `retryable`: the retry policy (retry.ts) reads that flag and nothing else,
 * so "is this worth another attempt" is decided once, here, where the error is understood.
 * Messages never contain the API key: provider replies that echo it are redacted on the way in.
 */
import type { ContextLengthDetails } from '../core/provider.ts';
import type { z } from 'zod';
import { ActorloopError } from '../core/errors.ts';
import type { ActorloopErrorOptions } from '../core/errors.ts';
import type { Completion } from '../core/provider.ts';

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

/**
 * Base of every error a model call can end with; `retryable` drives the retry policy.
 *
 * @example
 * ```ts
 * catch (e) { if (e instanceof InferenceError && !e.retryable) throw e; }
 * ```
 */
export abstract class InferenceError extends ActorloopError {
  abstract readonly retryable: boolean;
  /** HTTP status of the failed response, when there was one. */
  readonly status: number | undefined;
  /** Behind a gateway (OpenRouter): what the upstream provider said, when the gateway passed it on. */
  readonly upstream: UpstreamError | undefined;

  constructor(message: string, options: InferenceErrorOptions = {}) {
    super(message, options);
    this.status = options.status;
    this.upstream = options.upstream;
  }

  override toJSON(): ReturnType<ActorloopError['toJSON']> & { retryable: boolean; status?: number; upstream?: UpstreamError } {
    return {
      ...super.toJSON(),
      retryable: this.retryable,
      ...(this.status === undefined ? {} : { status: this.status }),
      ...(this.upstream === undefined ? {} : { upstream: this.upstream }),
    };
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
  readonly code = 'authentication' as const;
  readonly blame = 'user' as const;
  readonly retryable = false;
  /** `keyVariable`: the setting to check, named in the message (default OPENAI_API_KEY or OPENROUTER_API_KEY). */
  constructor(detail: string, options: InferenceErrorOptions & { readonly keyVariable?: string } = {}) {
    super(
      `The provider refused the credentials (HTTP ${options.status ?? 401}): ${detail}. Check ${options.keyVariable ?? 'OPENAI_API_KEY (or OPENROUTER_API_KEY)'}: ` +
        'that it is set, valid for this base URL, and allowed to use the model.',
      options,
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
  readonly code = 'rate_limited' as const;
  readonly blame = 'provider' as const;
  readonly retryable: boolean;
  /** Wait the server asked for (`retry-after-ms` / `retry-after`), in ms. */
  readonly retryAfterMs: number | undefined;
  constructor(detail: string, options: RateLimitErrorOptions = {}) {
    super(
      options.quotaExhausted === true
        ? `The provider account is out of quota (HTTP 429): ${detail}. Add credits or raise the limit; retrying will not help.`
        : `The provider is rate limiting requests (HTTP 429): ${detail}. Retry later, lower concurrency, or raise the limit.`,
      { ...options, status: 429 },
    );
    this.retryable = options.quotaExhausted !== true;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * 5xx (or an error event inside a stream, `status` undefined): the provider failed. Retried.
 *
 * @example
 * ```ts
 * if (error instanceof ServerError) console.log(error.status); // 503
 * ```
 */
export class ServerError extends InferenceError {
  readonly code = 'server_error' as const;
  readonly blame = 'provider' as const;
  readonly retryable = true;
  /** Wait the server asked for (503s often send Retry-After), in ms. */
  readonly retryAfterMs: number | undefined;
  constructor(detail: string, options: InferenceErrorOptions & { readonly retryAfterMs?: number } = {}) {
    super(
      `The provider failed (${options.status === undefined ? 'error inside the stream' : `HTTP ${options.status}`}): ${detail}. ` +
        'This is usually transient: retry later.',
      options,
    );
    this.retryAfterMs = options.retryAfterMs;
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
  readonly code = 'context_length_exceeded' as const;
  readonly blame = 'user' as const;
  readonly retryable = false;
  readonly limitTokens: number | undefined;
  readonly promptTokens: number | undefined;
  readonly completionTokens: number | undefined;
  constructor(detail: string, options: InferenceErrorOptions & ContextLengthDetails = {}) {
    super(
      `The conversation is longer than the model's context window: ${detail}. Shorten the conversation, ` +
        'enable a context budget (sliding window, observation masking or summary), or use a model with a larger context.',
      options,
    );
    this.limitTokens = options.limitTokens;
    this.promptTokens = options.promptTokens;
    this.completionTokens = options.completionTokens;
  }
}

/**
 * Any other 4xx: the request itself is wrong (unknown model, unsupported parameter, bad base
 * URL). Never retried.
 *
 * @example
 * ```ts
 * if (error instanceof BadRequestError && error.status === 404) console.log('check the model and base URL');
 * ```
 */
export class BadRequestError extends InferenceError {
  readonly code = 'bad_request' as const;
  readonly blame = 'user' as const;
  readonly retryable = false;
  constructor(detail: string, options: InferenceErrorOptions = {}) {
    const hint =
      options.status === 404
        ? 'Check the model name and the base URL (OpenAI-compatible servers usually serve under /v1).'
        : 'Check the model name and the request parameters this server supports.';
    super(`The provider rejected the request (HTTP ${options.status ?? 400}): ${detail}. ${hint}`, options);
  }
}

/**
 * No (complete) reply within the provider's `timeoutMs`. Retried.
 *
 * @example
 * ```ts
 * openAICompatible({ timeoutMs: 120_000 }); // raise it for slow local models
 * ```
 */
export class ProviderTimeoutError extends InferenceError {
  readonly code = 'provider_timeout' as const;
  readonly blame = 'provider' as const;
  readonly retryable = true;
  constructor(timeoutMs: number | undefined, options: InferenceErrorOptions = {}) {
    super(
      `The provider did not answer within ${timeoutMs === undefined ? 'the timeout' : `${timeoutMs} ms`}. ` +
        'Retry, or raise `timeoutMs` for slow (e.g. local) models.',
      options,
    );
  }
}

/**
 * The connection failed (refused, reset, DNS). Retried.
 *
 * @example
 * ```ts
 * if (error instanceof NetworkError) console.log('is the server at OPENAI_BASE_URL running?');
 * ```
 */
export class NetworkError extends InferenceError {
  readonly code = 'network' as const;
  readonly blame = 'provider' as const;
  readonly retryable = true;
  constructor(detail: string, options: InferenceErrorOptions = {}) {
    super(
      `Could not reach the provider: ${detail}. Check the network and that the server at the base URL is running.`,
      options,
    );
  }
}

/**
 * The reply could not be understood (unparseable JSON, no `choices`). Retried: in practice a
 * garbled body comes from a proxy or a truncated transfer and the next attempt is fine.
 *
 * @example
 * ```ts
 * if (error instanceof InvalidResponseError) console.log(error.message);
 * ```
 */
export class InvalidResponseError extends InferenceError {
  readonly code = 'invalid_response' as const;
  readonly blame = 'provider' as const;
  readonly retryable = true;
  constructor(detail: string, options: InferenceErrorOptions = {}) {
    super(`The provider sent a reply that is not a valid chat completion: ${detail}.`, options);
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
  readonly code = 'structured_output' as const;
  readonly blame = 'model' as const;
  readonly retryable = false;
  readonly issues: readonly z.core.$ZodIssue[];
  /** The model's raw reply (`null` when it sent no text). */
  readonly text: string | null;
  /** The whole reply (usage and cost included) when the call itself succeeded, so a caller can feed it back. */
  completion?: Completion;
  constructor(schemaName: string, issues: readonly z.core.$ZodIssue[], text: string | null, options: InferenceErrorOptions = {}) {
    const first = issues[0];
    const where = first === undefined || first.path.length === 0 ? '' : ` at ${first.path.join('.')}`;
    super(
      `The model's reply does not match the output schema "${schemaName}"${where}: ${first?.message ?? 'no reply'}` +
        `${issues.length > 1 ? ` (+${issues.length - 1} more)` : ''}. Feed the issues back to the model or relax the schema.`,
      options,
    );
    this.issues = issues;
    this.text = text;
  }
}

/**
 * Neither an API key nor a base URL is configured. Thrown when the provider is created.
 *
 * @example
 * ```ts
 * try { openAICompatible(); } catch (e) { if (e instanceof MissingConfigurationError) console.log(e.variables); }
 * ```
 */
export class MissingConfigurationError extends ActorloopError {
  readonly code = 'missing_configuration' as const;
  readonly blame = 'user' as const;
  readonly retryable = false;
  /** The environment variables that would fix it. */
  readonly variables: readonly string[];
  /** `provider: 'anthropic'` when anthropic() found no key (the message then names ANTHROPIC_API_KEY). */
  constructor(options: ActorloopErrorOptions & { readonly provider?: 'anthropic' } = {}) {
    super(
      options.provider === 'anthropic'
        ? 'No Anthropic API key is configured. Set ANTHROPIC_API_KEY, or pass `apiKey` to anthropic() ' +
            '(with `baseURL` for a gateway that speaks the Messages API).'
        : 'No model provider is configured. Set OPENAI_API_KEY (OpenAI), or OPENAI_BASE_URL (a local ' +
            'OpenAI-compatible server such as Ollama, vLLM or llama.cpp; no key needed), or OPENROUTER_API_KEY ' +
            '(OpenRouter) — or pass `apiKey` / `baseURL` to openAICompatible().',
      options,
    );
    this.variables = options.provider === 'anthropic' ? ['ANTHROPIC_API_KEY'] : ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENROUTER_API_KEY'];
  }
}

/**
 * A stream broke before its finish reason. Partial text and tool calls were *not* returned as a
 * completion. `retryable` is true only when nothing had been yielded yet (the provider then
 * retries itself); after the first delta the caller decides, since it has seen the deltas.
 *
 * @example
 * ```ts
 * if (error instanceof StreamInterruptedError && !error.retryable) console.log('re-run the step');
 * ```
 */
export class StreamInterruptedError extends InferenceError {
  readonly code = 'stream_interrupted' as const;
  readonly blame = 'provider' as const;
  readonly retryable: boolean;
  constructor(detail: string, options: InferenceErrorOptions & { readonly deltasYielded: boolean }) {
    super(
      `The reply stream ended before the model finished: ${detail.replace(/\.$/, '')}. The partial reply was discarded; ` +
        're-run the step.',
      options,
    );
    this.retryable = !options.deltasYielded;
  }
}

/**
 * Something failed that none of the other classes describe. Not retried; see `cause`.
 *
 * @example
 * ```ts
 * if (error instanceof UnknownProviderError) console.error(error.cause);
 * ```
 */
export class UnknownProviderError extends InferenceError {
  readonly code = 'provider_unknown' as const;
  readonly blame = 'provider' as const;
  readonly retryable = false;
  constructor(detail: string, options: InferenceErrorOptions = {}) {
    super(`The model call failed unexpectedly: ${detail}.`, options);
  }
}

/**
 * The call was cancelled. The provider itself rejects with the caller's `signal.reason` (like
 * `fetch`); this class is only what `classifyError` makes of an abort it finds on its own.
 *
 * @example
 * ```ts
 * classifyError(new APIUserAbortError()).retryable; // false
 * ```
 */
export class CancelledError extends InferenceError {
  readonly code = 'model_call_cancelled' as const;
  readonly blame = 'user' as const;
  readonly retryable = false;
  constructor(options: InferenceErrorOptions = {}) {
    super('The model call was cancelled.', options);
  }
}
