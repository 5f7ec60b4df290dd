/** Replies are parsed with zod from `unknown`: compatible servers differ, and a malformed reply must become a typed error. */
import { z } from 'zod';
import type { ChatCompletionCreateParamsBase, ChatCompletionToolChoiceOption } from 'openai/resources/chat/completions';
import { toOpenAIMessages } from '../conversation/openai.ts';
import { estimateTokens, utf8Length } from '../context/estimate.ts';
import { reasoningText, type ReasoningPart, type ToolCall } from '../core/messages.ts';
import type { ModelCapabilities } from './capabilities.ts';
import { classifyHttpError } from './classify.ts';
import type { ClassifyContext } from './classify.ts';
import { StructuredOutputError, InferenceError } from './errors.ts';
import type { Completion, CompletionRequest, FinishReason, ToolChoice, Usage } from '../core/provider.ts';
import { parseStructuredOutput, responseFormatFor } from './structuredOutput.ts';
import { costOf } from './usage.ts';
import type { PriceTable } from './usage.ts';

export function buildChatParams(
  request: CompletionRequest<unknown>,
  model: string,
  capabilities: ModelCapabilities = {},
): ChatCompletionCreateParamsBase {
  const tools = request.tools ?? [];
  const effort = capabilities.reasoningEffort === undefined || capabilities.reasoningEffort === false
    ? undefined
    : (request.reasoningEffort ?? (capabilities.reasoningEffort === true ? undefined : capabilities.reasoningEffort));
  return {
    model,
    messages: toOpenAIMessages(request.messages, { sendReasoningBack: capabilities.sendReasoningBack === true, systemFirst: capabilities.systemMessages === 'first' }),
    ...(tools.length === 0
      ? {}
      : {
          tools: tools.map((tool) => ({
            type: 'function' as const,
            function: { name: tool.name, description: tool.description, parameters: { ...tool.parameters } },
          })),
          // Some servers reject tool_choice without tools, so it only travels with them.
          ...(request.toolChoice === undefined ? {} : { tool_choice: toolChoiceParam(request.toolChoice) }),
        }),
    ...(request.temperature === undefined || capabilities.temperature === false ? {} : { temperature: request.temperature }),
    // max_tokens unless the model needs the newer field: every compatible server understands it.
    ...(request.maxTokens === undefined
      ? {}
      : capabilities.maxTokensParam === 'max_completion_tokens'
        ? { max_completion_tokens: request.maxTokens }
        : { max_tokens: request.maxTokens }),
    ...(effort === undefined ? {} : { reasoning_effort: effort }),
    ...(request.output === undefined ? {} : { response_format: responseFormatFor(request.output) }),
  };
}

function toolChoiceParam(choice: ToolChoice): ChatCompletionToolChoiceOption {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

const TextPart = z.looseObject({ type: z.string(), text: z.string().nullish() });

/** Mistral's reasoning models send content as parts: `text`, and `thinking` holding text parts of its own. */
export const ContentBody = z.union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string().nullish(), thinking: z.union([z.string(), z.array(TextPart)]).nullish() }))]);

/** The answer text and the thinking a message's content holds. */
export function splitContent(content: z.infer<typeof ContentBody> | null | undefined): { readonly text: string; readonly thinking: string } {
  if (content === null || content === undefined) return { text: '', thinking: '' };
  if (typeof content === 'string') return { text: content, thinking: '' };
  let text = '';
  let thinking = '';
  for (const part of content) {
    if (part.type === 'text') text += part.text ?? '';
    else if (part.type === 'thinking') thinking += typeof part.thinking === 'string' ? part.thinking : (part.thinking ?? []).map((inner) => (inner.type === 'text' ? (inner.text ?? '') : '')).join('');
  }
  return { text, thinking };
}

export const UsageBody = z.object({
  prompt_tokens: z.number().nullish(),
  completion_tokens: z.number().nullish(),
  total_tokens: z.number().nullish(),
  // Cache hits, counted inside prompt_tokens: OpenAI's and DeepSeek's ways of saying it.
  prompt_tokens_details: z.looseObject({ cached_tokens: z.number().nullish() }).nullish(),
  prompt_cache_hit_tokens: z.number().nullish(),
});

const CompletionBody = z.object({
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        finish_reason: z.string().nullish(),
        message: z.object({
          content: ContentBody.nullish(),
          refusal: z.string().nullish(),
          // DeepSeek and vLLM call it reasoning_content; OpenRouter, Groq and Ollama call it reasoning.
          reasoning_content: z.string().nullish(),
          reasoning: z.string().nullish(),
          tool_calls: z
            .array(
              z.object({
                id: z.string().nullish(),
                function: z.object({ name: z.string(), arguments: z.unknown().optional() }),
                extra_content: z.unknown().optional(),
              }),
            )
            .nullish(),
        }),
      }),
    )
    .min(1),
  usage: UsageBody.nullish(),
});

/** `undefined` when the server sent none, so the caller estimates it rather than report a silent zero. */
export function toUsage(body: z.infer<typeof UsageBody> | null | undefined): Usage | undefined {
  if (body === null || body === undefined) return undefined;
  // A body of nulls (some servers) carries no counts either.
  if (body.prompt_tokens == null && body.completion_tokens == null && body.total_tokens == null) return undefined;
  const promptTokens = body.prompt_tokens ?? 0;
  const completionTokens = body.completion_tokens ?? 0;
  const cached = body.prompt_tokens_details?.cached_tokens ?? body.prompt_cache_hit_tokens;
  return {
    promptTokens,
    completionTokens,
    totalTokens: body.total_tokens ?? promptTokens + completionTokens,
    ...(cached === null || cached === undefined || cached <= 0 ? {} : { cacheReadTokens: Math.min(cached, promptTokens) }),
  };
}

export function toFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'stop':
    case 'tool_calls':
    case 'length':
    case 'content_filter':
      return reason;
    case 'function_call':
      return 'tool_calls';
    default:
      return 'other';
  }
}

/** Arguments are JSON text; some servers (llama.cpp, TGI) send the object itself. */
export function argumentsText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A call's `extra_content` (Gemini signs calls there) as the JSON text the call goes back with; none unless an object. */
export function extraContentText(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? JSON.stringify(value) : undefined;
}

/** Servers that omit tool-call ids (some local ones) still need one for the tool result. */
export function fallbackToolCallId(index: number): string {
  return `call_${index}`;
}

/** Shared by the streamed and non-streamed paths, so both produce the same Completion. */
export interface RawCompletion {
  readonly text: string | null;
  readonly refusal: string | null;
  readonly reasoning: string | readonly ReasoningPart[] | null;
  readonly toolCalls: readonly ToolCall[];
  readonly finishReason: FinishReason;
  readonly usage: Usage | undefined;
  readonly model: string;
}

export function finishCompletion<TOutput>(
  raw: RawCompletion,
  request: CompletionRequest<TOutput>,
  requestedModel: string,
  prices: PriceTable,
): Completion<TOutput> {
  const usage = raw.usage ?? estimateUsage(request, raw);
  // The filter omitted content: what text came is not the answer, so the reply counts as declined.
  const refusal = raw.refusal ?? (raw.finishReason === 'content_filter' ? "The provider's content filter stopped the reply." : null);
  const costUsd = costOf(raw.model, usage, prices) ?? costOf(requestedModel, usage, prices);
  const completion: Completion<TOutput> = {
    text: raw.text,
    toolCalls: raw.toolCalls,
    finishReason: raw.finishReason,
    usage,
    model: raw.model,
    ...(costUsd === undefined ? {} : { costUsd }),
    ...(raw.reasoning === null || raw.reasoning.length === 0 ? {} : { reasoning: typeof raw.reasoning === 'string' ? [{ type: 'thinking' as const, text: raw.reasoning }] : raw.reasoning }),
    ...(refusal === null ? {} : { refusal }),
  };
  // A reply that calls tools is not the answer yet: its text (if any) is not held to the schema.
  if (request.output === undefined || raw.toolCalls.length > 0) return completion;
  try {
    return { ...completion, output: parseStructuredOutput(raw.text, request.output, refusal) };
  } catch (error) {
    if (error instanceof StructuredOutputError) error.completion = completion;
    throw error;
  }
}

/** An `error` object in a 2xx body (OpenRouter does this) is classified like the HTTP error it describes. */
export function toRawCompletion(body: unknown, requestedModel: string, context: ClassifyContext = {}): RawCompletion {
  if (typeof body === 'object' && body !== null && 'error' in body && typeof body.error === 'object' && body.error !== null) {
    throw classifyHttpError(undefined, body.error, 'error in the reply body', undefined, context);
  }
  const parsed = CompletionBody.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? 'the body' : issue.path.join('.');
    throw InferenceError.invalidResponse(
      typeof body === 'string' ? 'the body is not JSON' : `${where}: ${issue?.message ?? 'unexpected shape'}`,
    );
  }
  const { choices, usage, model } = parsed.data;
  const choice = choices[0] as (typeof choices)[number];
  const toolCalls = (choice.message.tool_calls ?? []).map((call, index) => {
    const extraContent = extraContentText(call.extra_content);
    return { id: call.id || fallbackToolCallId(index), name: call.function.name, arguments: argumentsText(call.function.arguments), ...(extraContent === undefined ? {} : { extraContent }) };
  });
  const content = splitContent(choice.message.content);
  return {
    text: content.text || null,
    refusal: choice.message.refusal || null,
    reasoning: choice.message.reasoning_content || choice.message.reasoning || content.thinking || null,
    toolCalls,
    finishReason: toFinishReason(choice.finish_reason),
    usage: toUsage(usage),
    model: model || requestedModel,
  };
}

export function estimateUsage(request: Pick<CompletionRequest<unknown>, 'messages'>, raw: Pick<RawCompletion, 'text' | 'reasoning' | 'refusal' | 'toolCalls'>): Usage {
  const promptTokens = estimateTokens(request.messages);
  const thought = raw.reasoning === null ? '' : typeof raw.reasoning === 'string' ? raw.reasoning : reasoningText(raw.reasoning);
  let chars = utf8Length(raw.text ?? '') + utf8Length(thought) + utf8Length(raw.refusal ?? '');
  for (const call of raw.toolCalls) chars += utf8Length(call.name) + utf8Length(call.arguments);
  const completionTokens = Math.ceil(chars / 4);
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens, estimated: true };
}
