/** The client's own retries are off: every attempt goes through `withRetry`, and a stream is retried only before its first delta. */
import Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages';
import type { Completion, CompletionRequest, InferenceProvider, StreamEvent } from '../core/provider.ts';
import { ANTHROPIC_BASE_URL, resolveAnthropicConfig } from './anthropicConfig.ts';
import type { AnthropicOptions } from './anthropicConfig.ts';
import { classifyAnthropicError } from './anthropicClassify.ts';
import { buildMessagesParams, finishAnthropic, toAnthropicRaw } from './anthropicMapping.ts';
import type { AnthropicRaw } from './anthropicMapping.ts';
import { AnthropicStreamAssembler } from './anthropicStream.ts';
import { AttemptSignal, attemptFailure } from './attemptSignal.ts';
import type { ClassifyContext } from './classify.ts';
import { DEFAULT_TIMEOUT_MS } from './config.ts';
import { requestRetry, withRetry } from './retry.ts';
import { openStream, readStream, type OpenedStream, type Reading } from './streamReader.ts';
import type { RetryOptions } from './retry.ts';
import { DEFAULT_PRICES } from './usage.ts';
import { defined } from '../core/defined.ts';

/**
 * The Messages API; configuration from `options`, else `ANTHROPIC_*` env.
 *
 * @example
 * ```ts
 * const model = anthropic({ model: 'claude-sonnet-5-5', thinking: { budgetTokens: 2048 } });
 * ```
 */
export function anthropic(options: AnthropicOptions = {}): InferenceProvider {
  const config = resolveAnthropicConfig(options, options.env ?? process.env);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // A gateway bills its own prices, not Anthropic's list prices.
  const prices = config.baseURL === ANTHROPIC_BASE_URL ? { ...DEFAULT_PRICES, ...options.prices } : { ...options.prices };
  const context: ClassifyContext = { secrets: [config.apiKey], timeoutMs, keyVariable: 'ANTHROPIC_API_KEY' };
  // The client lives in this closure only: the provider object itself holds nothing secret.
  // Everything is passed explicitly, so the SDK reads no credentials or profiles of its own.
  const client = new Anthropic({
    apiKey: config.apiKey,
    baseURL: config.baseURL,
    timeout: timeoutMs,
    maxRetries: 0,
    // Request logging stays off whatever ANTHROPIC_LOG says: bodies carry the conversation.
    logLevel: 'warn',
    ...(options.headers === undefined ? {} : { defaultHeaders: { ...options.headers } }),
    ...defined({ fetch: options.fetch }),
  });

  const retryOptions = (request: CompletionRequest<unknown>): RetryOptions => requestRetry(options.retry, request);

  const failure = (error: unknown, attempt: AttemptSignal, signal: AbortSignal | undefined): unknown =>
    attemptFailure(error, attempt, signal, timeoutMs, (cause) => classifyAnthropicError(cause, context));

  async function complete<TOutput>(request: CompletionRequest<TOutput>): Promise<Completion<TOutput>> {
    const model = request.model ?? config.model;
    const params = buildMessagesParams(request, model, config);
    return withRetry(async () => {
      const attempt = new AttemptSignal(request.signal, timeoutMs);
      try {
        const body: unknown = await client.messages.create({ ...params, stream: false }, { signal: attempt.signal });
        return finishAnthropic(toAnthropicRaw(body, model), request, model, prices);
      } catch (error) {
        throw failure(error, attempt, request.signal);
      } finally {
        attempt.dispose();
      }
    }, retryOptions(request));
  }

  async function* stream<TOutput>(request: CompletionRequest<TOutput>): AsyncGenerator<StreamEvent<TOutput>, void, undefined> {
    const model = request.model ?? config.model;
    const params = buildMessagesParams(request, model, config);
    const signal = request.signal;
    const opened = await withRetry(() => open(params, model, signal), retryOptions(request));
    const raw = yield* readStream(opened, reading(opened.attempt, signal));
    yield { type: 'done', completion: finishAnthropic(raw, request, model, prices) };
  }

  function reading(attempt: AttemptSignal, signal: AbortSignal | undefined): Reading {
    return { signal, timeoutMs, unit: 'event', failure: (error) => failure(error, attempt, signal) };
  }

  function open(params: MessageCreateParamsNonStreaming, model: string, signal: AbortSignal | undefined): Promise<OpenedStream<AnthropicRaw>> {
    const attempt = new AttemptSignal(signal, timeoutMs);
    return openStream(attempt, (streamSignal) => client.messages.create({ ...params, stream: true }, { signal: streamSignal }), new AnthropicStreamAssembler(model), reading(attempt, signal));
  }

  return {
    name: config.name,
    defaultModel: config.model,
    supportsNativeTools: true,
    // No response_format: a requested output is parsed and validated from the reply text.
    supportsStructuredOutput: false,
    complete,
    stream,
  };
}
