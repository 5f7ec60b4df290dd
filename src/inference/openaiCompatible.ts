/** A stream is retried only while nothing has been yielded: a silent second attempt could show the caller different text. */
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsBase } from 'openai/resources/chat/completions';
import { AttemptSignal, attemptFailure } from './attemptSignal.ts';
import { capabilitiesOf, type ModelCapabilities } from './capabilities.ts';
import { scatteredSystem } from '../conversation/openai.ts';
import { InferenceError } from './errors.ts';
import { buildChatParams, finishCompletion, toRawCompletion } from './chatMapping.ts';
import type { RawCompletion } from './chatMapping.ts';
import { classifyError } from './classify.ts';
import type { ClassifyContext } from './classify.ts';
import { billsListPrices, DEFAULT_TIMEOUT_MS, resolveConfig } from './config.ts';
import type { OpenAICompatibleOptions } from './config.ts';
import type { Completion, CompletionRequest, InferenceProvider, StreamEvent } from '../core/provider.ts';
import { requestRetry, withRetry } from './retry.ts';
import { openStream, readStream, type OpenedStream, type Reading } from './streamReader.ts';
import type { RetryOptions } from './retry.ts';
import { StreamAssembler } from './streamAssembler.ts';
import { DEFAULT_PRICES } from './usage.ts';
import { defined } from '../core/defined.ts';

/**
 * Any chat-completions endpoint; configuration from `options`, else `OPENAI_*` (or `OPENROUTER_*`) env.
 *
 * @example
 * ```ts
 * const local = openAICompatible({ baseURL: 'http://127.0.0.1:11434/v1', model: 'llama3.2' }); // no key
 * const reply = await local.complete({ messages: [{ role: 'user', content: 'Say hi' }] });
 * ```
 */
export function openAICompatible(options: OpenAICompatibleOptions = {}): InferenceProvider {
  const config = resolveConfig(options, options.env ?? process.env);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const prices = billsListPrices(config.baseURL) ? { ...DEFAULT_PRICES, ...options.prices } : { ...options.prices };
  const context: ClassifyContext = { secrets: config.keyIsSecret ? [config.apiKey] : [], timeoutMs };
  // The client lives in this closure only: the provider object itself holds nothing secret.
  const client = new OpenAI({
    apiKey: config.apiKey,
    baseURL: config.baseURL,
    organization: config.organization,
    project: config.project,
    // Never forward an OPENAI_ADMIN_KEY from the environment to whatever endpoint this is.
    adminAPIKey: null,
    timeout: timeoutMs,
    maxRetries: 0,
    // Request logging stays off whatever OPENAI_LOG says: it prints headers the client does not know to redact.
    logLevel: 'warn',
    ...(options.headers === undefined ? {} : { defaultHeaders: { ...options.headers } }),
    // A flat error body (older vLLM) is nested under `error` by the client itself, so its message reaches classifyError.
    ...defined({ fetch: options.fetch }),
  });
  // Models whose server refused a later system message: from then on their requests join them first.
  const systemFirst = new Set<string>();
  const capabilities = (model: string): ModelCapabilities => {
    const declared = capabilitiesOf(model, options.models);
    return systemFirst.has(model) ? { ...declared, systemMessages: 'first' } : declared;
  };
  const paramsFor = (request: CompletionRequest<unknown>, model: string): ChatCompletionCreateParamsBase => buildChatParams(request, model, capabilities(model));

  /** Sent again at once, system messages joined, when the template refused them where they were (unless declared `anywhere`). */
  async function placed<T>(request: CompletionRequest<unknown>, model: string, send: (params: ChatCompletionCreateParamsBase) => Promise<T>): Promise<T> {
    try {
      return await send(paramsFor(request, model));
    } catch (error) {
      const refused = error instanceof InferenceError && error.code === 'system_message_refused';
      if (!refused || capabilities(model).systemMessages !== undefined || !scatteredSystem(request.messages)) throw error;
      systemFirst.add(model);
      return send(paramsFor(request, model));
    }
  }

  const retryOptions = (request: CompletionRequest<unknown>): RetryOptions => requestRetry(options.retry, request);

  const failure = (error: unknown, attempt: AttemptSignal, signal: AbortSignal | undefined): unknown =>
    attemptFailure(error, attempt, signal, timeoutMs, (cause) => classifyError(cause, context));

  async function complete<TOutput>(request: CompletionRequest<TOutput>): Promise<Completion<TOutput>> {
    const model = request.model ?? config.model;
    const send = async (params: ChatCompletionCreateParamsBase): Promise<Completion<TOutput>> => {
      const attempt = new AttemptSignal(request.signal, timeoutMs);
      try {
        const body: unknown = await client.chat.completions.create({ ...params, stream: false }, { signal: attempt.signal });
        return finishCompletion(toRawCompletion(body, model, context), request, model, prices);
      } catch (error) {
        throw failure(error, attempt, request.signal);
      } finally {
        attempt.dispose();
      }
    };
    return withRetry(() => placed(request, model, send), retryOptions(request));
  }

  async function* stream<TOutput>(request: CompletionRequest<TOutput>): AsyncGenerator<StreamEvent<TOutput>, void, undefined> {
    const model = request.model ?? config.model;
    const signal = request.signal;
    const opened = await withRetry(() => placed(request, model, (params) => open(params, model, signal)), retryOptions(request));
    const raw = yield* readStream(opened, reading(opened.attempt, signal));
    yield { type: 'done', completion: finishCompletion(raw, request, model, prices) };
  }

  function reading(attempt: AttemptSignal, signal: AbortSignal | undefined): Reading {
    return { signal, timeoutMs, unit: 'chunk', failure: (error) => failure(error, attempt, signal) };
  }

  function open(params: ChatCompletionCreateParamsBase, model: string, signal: AbortSignal | undefined): Promise<OpenedStream<RawCompletion>> {
    const attempt = new AttemptSignal(signal, timeoutMs);
    return openStream(attempt, (streamSignal) => client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } }, { signal: streamSignal }), new StreamAssembler(model), reading(attempt, signal));
  }

  return {
    name: config.name,
    defaultModel: config.model,
    supportsNativeTools: true,
    supportsStructuredOutput: true,
    complete,
    stream,
  };
}
