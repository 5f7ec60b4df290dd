/**
 * CompletionRequest → chat-completions parameters, and a chat-completions reply → Completion.
 * Replies are parsed with zod from `unknown`: compatible servers differ (missing usage, `null`
 * ids, extra fields), and a malformed reply must become a typed error, not a crash later.
 */
import { z } from 'zod';
import type { ChatCompletionCreateParamsBase, ChatCompletionToolChoiceOption } from 'openai/resources/chat/completions';
import { toOpenAIMessages } from '../conversation/openai.ts';
import type { ToolCall } from '../core/messages.ts';
import { classifyHttpError } from './classify.ts';
import type { ClassifyContext } from './classify.ts';
import { InvalidResponseError, StructuredOutputError } from './errors.ts';
import type { Completion, CompletionRequest, FinishReason, ToolChoice, Usage } from '../core/provider.ts';
import { ZERO_USAGE } from '../core/provider.ts';
import { parseStructuredOutput, responseFormatFor } from './structuredOutput.ts';
import { costOf } from './usage.ts';
import type { PriceTable } from './usage.ts';

/**
 * The body of a chat-completions request (without `stream`).
 *
 * @example
 * ```ts
 * buildChatParams({ messages: [{ role: 'user', content: 'hi' }], temperature: 0 }, 'gpt-4o-mini');
 * // { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], temperature: 0 }
 * ```
 */
export function buildChatParams(request: CompletionRequest<unknown>, model: string): ChatCompletionCreateParamsBase {
  const tools = request.tools ?? [];
  return {
    model,
    messages: toOpenAIMessages(request.messages),
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
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    // max_tokens rather than max_completion_tokens: every compatible server understands it.
    ...(request.maxTokens === undefined ? {} : { max_tokens: request.maxTokens }),
    ...(request.output === undefined ? {} : { response_format: responseFormatFor(request.output) }),
  };
}

function toolChoiceParam(choice: ToolChoice): ChatCompletionToolChoiceOption {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

/** The `usage` object of a reply or of the last stream chunk. */
export const UsageBody = z.object({
  prompt_tokens: z.number().nullish(),
  completion_tokens: z.number().nullish(),
  total_tokens: z.number().nullish(),
});

const CompletionBody = z.object({
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        finish_reason: z.string().nullish(),
        message: z.object({
          content: z.string().nullish(),
          refusal: z.string().nullish(),
          tool_calls: z
            .array(
              z.object({
                id: z.string().nullish(),
                function: z.object({ name: z.string(), arguments: z.string().nullish() }),
              }),
            )
            .nullish(),
        }),
      }),
    )
    .min(1),
  usage: UsageBody.nullish(),
});

/**
 * Usage as reported, zeros when the server sent none; total derived when missing.
 *
 * @example
 * ```ts
 * toUsage({ prompt_tokens: 3, completion_tokens: 4 }); // { promptTokens: 3, completionTokens: 4, totalTokens: 7 }
 * ```
 */
export function toUsage(body: z.infer<typeof UsageBody> | null | undefined): Usage {
  if (body === null || body === undefined) return ZERO_USAGE;
  const promptTokens = body.prompt_tokens ?? 0;
  const completionTokens = body.completion_tokens ?? 0;
  return { promptTokens, completionTokens, totalTokens: body.total_tokens ?? promptTokens + completionTokens };
}

/**
 * Map the endpoint's finish reason; anything unknown is `other`.
 *
 * @example
 * ```ts
 * toFinishReason('function_call'); // 'tool_calls'
 * ```
 */
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

/**
 * Servers that omit tool-call ids (some local ones) still need one for the tool result.
 *
 * @example
 * ```ts
 * fallbackToolCallId(2); // 'call_2'
 * ```
 */
export function fallbackToolCallId(index: number): string {
  return `call_${index}`;
}

/** Shared by the streamed and non-streamed paths, so both produce the same Completion. */
export interface RawCompletion {
  readonly text: string | null;
  readonly refusal: string | null;
  readonly toolCalls: readonly ToolCall[];
  readonly finishReason: FinishReason;
  readonly usage: Usage;
  readonly model: string;
}

/**
 * Add cost and (when requested) the validated structured output.
 *
 * @example
 * ```ts
 * finishCompletion(raw, request, 'gpt-4o-mini', DEFAULT_PRICES).costUsd; // e.g. 0.0000123
 * ```
 */
export function finishCompletion<TOutput>(
  raw: RawCompletion,
  request: CompletionRequest<TOutput>,
  requestedModel: string,
  prices: PriceTable,
): Completion<TOutput> {
  const costUsd = costOf(raw.model, raw.usage, prices) ?? costOf(requestedModel, raw.usage, prices);
  const completion: Completion<TOutput> = {
    text: raw.text,
    toolCalls: raw.toolCalls,
    finishReason: raw.finishReason,
    usage: raw.usage,
    model: raw.model,
    ...(costUsd === undefined ? {} : { costUsd }),
  };
  // A reply that calls tools is not the answer yet: its text (if any) is not held to the schema.
  if (request.output === undefined || raw.toolCalls.length > 0) return completion;
  try {
    return { ...completion, output: parseStructuredOutput(raw.text, request.output, raw.refusal) };
  } catch (error) {
    if (error instanceof StructuredOutputError) error.completion = completion;
    throw error;
  }
}

/**
 * Validate a non-streamed reply body. An `error` object in a 2xx body (OpenRouter does this)
 * is classified like the HTTP error it describes.
 *
 * @example
 * ```ts
 * toRawCompletion(await client.chat.completions.create(params), 'gpt-4o-mini').text;
 * ```
 */
export function toRawCompletion(body: unknown, requestedModel: string, context: ClassifyContext = {}): RawCompletion {
  if (typeof body === 'object' && body !== null && 'error' in body && typeof body.error === 'object' && body.error !== null) {
    throw classifyHttpError(undefined, body.error, 'error in the reply body', undefined, context);
  }
  const parsed = CompletionBody.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? 'the body' : issue.path.join('.');
    throw new InvalidResponseError(
      typeof body === 'string' ? 'the body is not JSON' : `${where}: ${issue?.message ?? 'unexpected shape'}`,
    );
  }
  const { choices, usage, model } = parsed.data;
  const choice = choices[0] as (typeof choices)[number];
  const toolCalls = (choice.message.tool_calls ?? []).map((call, index) => ({
    id: call.id || fallbackToolCallId(index),
    name: call.function.name,
    arguments: call.function.arguments ?? '',
  }));
  return {
    text: choice.message.content || null,
    refusal: choice.message.refusal ?? null,
    toolCalls,
    finishReason: toFinishReason(choice.finish_reason),
    usage: toUsage(usage),
    model: model || requestedModel,
  };
}
