/** Block types this provider does not use (server tools, citations) are skipped; a malformed reply is InferenceError (`invalid_response`). */
import { z } from 'zod';
import type { MessageCreateParamsNonStreaming, TextBlockParam, Tool, ToolChoice as AnthropicToolChoice } from '@anthropic-ai/sdk/resources/messages';
import { toAnthropicMessages } from '../conversation/anthropic.ts';
import type { ReasoningPart, ToolCall } from '../core/messages.ts';
import type { Completion, CompletionRequest, FinishReason, ToolChoice, Usage } from '../core/provider.ts';
import type { ResolvedAnthropicConfig } from './anthropicConfig.ts';
import { finishCompletion } from './chatMapping.ts';
import type { RawCompletion } from './chatMapping.ts';
import type { PriceTable } from './usage.ts';
import { InferenceError } from './errors.ts';

const EPHEMERAL = { cache_control: { type: 'ephemeral' as const } };

/** With thinking on, the thinking budget is added to `maxTokens`: Anthropic counts both. */
export function buildMessagesParams(
  request: CompletionRequest<unknown>,
  model: string,
  config: ResolvedAnthropicConfig,
): MessageCreateParamsNonStreaming {
  const { system, messages } = toAnthropicMessages(request.messages);
  const cache = config.promptCaching ? EPHEMERAL : {};
  const tools = request.tools ?? [];
  const budget = config.thinkingBudget;
  const maxTokens = request.maxTokens === undefined ? config.maxTokens : request.maxTokens + (budget ?? 0);
  const systemBlocks: TextBlockParam[] | undefined = system === undefined ? undefined : [{ type: 'text', text: system, ...cache }];
  // Anthropic refuses a forced tool and a temperature other than 1 while thinking; the run's repair turn asks for the tool instead.
  const thinking = budget !== undefined || config.adaptiveThinking;
  return {
    model,
    max_tokens: maxTokens,
    messages,
    ...(systemBlocks === undefined ? {} : { system: systemBlocks }),
    ...(tools.length === 0
      ? {}
      : {
          // One breakpoint after the last tool caches every definition before it.
          tools: tools.map(
            (tool, index): Tool => ({
              name: tool.name,
              description: tool.description,
              input_schema: { ...tool.parameters, type: 'object' },
              ...(index === tools.length - 1 ? cache : {}),
            }),
          ),
          ...(request.toolChoice === undefined ? {} : { tool_choice: toolChoiceParam(request.toolChoice, thinking) }),
        }),
    ...(request.temperature === undefined || thinking ? {} : { temperature: request.temperature }),
    ...(budget === undefined ? {} : { thinking: { type: 'enabled', budget_tokens: budget } }),
    ...(config.adaptiveThinking ? { thinking: { type: 'adaptive' } } : {}),
  };
}

function toolChoiceParam(choice: ToolChoice, thinking: boolean): AnthropicToolChoice {
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'none') return { type: 'none' };
  if (thinking) return { type: 'auto' };
  if (choice === 'required') return { type: 'any' };
  return { type: 'tool', name: choice.name };
}

export const AnthropicUsageBody = z.object({
  input_tokens: z.number().nullish(),
  output_tokens: z.number().nullish(),
  cache_creation_input_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
});
export type AnthropicUsageBody = z.infer<typeof AnthropicUsageBody>;

/** Anthropic's `input_tokens` leaves out cached input; `promptTokens` counts all of it, cached shares broken out. */
export function toAnthropicUsage(body: AnthropicUsageBody | null | undefined): Usage {
  const input = body?.input_tokens ?? 0;
  const cacheWrite = body?.cache_creation_input_tokens ?? 0;
  const cacheRead = body?.cache_read_input_tokens ?? 0;
  const completionTokens = body?.output_tokens ?? 0;
  const promptTokens = input + cacheWrite + cacheRead;
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens, cacheReadTokens: cacheRead, cacheWriteTokens: cacheWrite };
}

/** `max_tokens` is `length`, the same finish the OpenAI-compatible provider reports for a cut reply. */
export function toAnthropicFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'refusal':
      return 'content_filter';
    default:
      return 'other';
  }
}

const TextBlock = z.object({ type: z.literal('text'), text: z.string() });
const ThinkingBlock = z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().nullish() });
const RedactedThinkingBlock = z.object({ type: z.literal('redacted_thinking'), data: z.string() });
const ToolUseBlock = z.object({ type: z.literal('tool_use'), id: z.string().min(1), name: z.string(), input: z.unknown() });

const MessageBody = z.object({
  model: z.string().nullish(),
  content: z.array(z.looseObject({ type: z.string() })),
  stop_reason: z.string().nullish(),
  stop_details: z.looseObject({ explanation: z.string().nullish() }).nullish(),
  usage: AnthropicUsageBody.nullish(),
});

export interface AnthropicRaw extends RawCompletion {
  readonly reasoning: readonly ReasoningPart[];
}

/** Server tool use and results are not ours to run and are left out. */
export class ContentCollector {
  readonly text: string[] = [];
  readonly reasoning: ReasoningPart[] = [];
  readonly toolCalls: ToolCall[] = [];

  add(block: { readonly type: string }, where: string): void {
    const parsed = parseBlock(block, where);
    if (parsed === undefined) return;
    if (parsed.type === 'text') this.text.push(parsed.text);
    else if (parsed.type === 'thinking') {
      this.reasoning.push(parsed.signature ? { type: 'thinking', text: parsed.thinking, signature: parsed.signature } : { type: 'thinking', text: parsed.thinking });
    } else if (parsed.type === 'redacted_thinking') this.reasoning.push({ type: 'redacted', data: parsed.data });
    else this.toolCalls.push({ id: parsed.id, name: parsed.name, arguments: JSON.stringify(parsed.input ?? {}) });
  }
}

function parseBlock(block: { readonly type: string }, where: string) {
  const schema =
    block.type === 'text' ? TextBlock
    : block.type === 'thinking' ? ThinkingBlock
    : block.type === 'redacted_thinking' ? RedactedThinkingBlock
    : block.type === 'tool_use' ? ToolUseBlock
    : undefined;
  if (schema === undefined) return undefined;
  const parsed = schema.safeParse(block);
  if (!parsed.success) {
    throw InferenceError.invalidResponse(`${where} (a ${block.type} block): ${parsed.error.issues[0]?.message ?? 'unexpected shape'}`);
  }
  return parsed.data;
}

export function toAnthropicRaw(body: unknown, requestedModel: string): AnthropicRaw {
  const parsed = MessageBody.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? 'the body' : issue.path.join('.');
    throw InferenceError.invalidResponse(typeof body === 'string' ? 'the body is not JSON' : `${where}: ${issue?.message ?? 'unexpected shape'}`);
  }
  const { content, stop_reason: stopReason, stop_details: stopDetails, usage, model } = parsed.data;
  const collected = new ContentCollector();
  content.forEach((block, index) => collected.add(block, `content.${index}`));
  return rawOf(collected, stopReason, stopDetails?.explanation, toAnthropicUsage(usage), model || requestedModel);
}

export function rawOf(
  collected: ContentCollector,
  stopReason: string | null | undefined,
  refusalExplanation: string | null | undefined,
  usage: Usage,
  model: string,
): AnthropicRaw {
  const finishReason = toAnthropicFinishReason(stopReason);
  return {
    text: collected.text.join('') || null,
    refusal: finishReason === 'content_filter' ? (refusalExplanation ?? 'The model declined to answer.') : null,
    toolCalls: collected.toolCalls,
    finishReason,
    usage,
    model,
    reasoning: collected.reasoning,
  };
}

export function finishAnthropic<TOutput>(
  raw: AnthropicRaw,
  request: CompletionRequest<TOutput>,
  requestedModel: string,
  prices: PriceTable,
): Completion<TOutput> {
  const completion = finishCompletion(raw, request, requestedModel, prices);
  return raw.reasoning.length === 0 ? completion : { ...completion, reasoning: raw.reasoning };
}
