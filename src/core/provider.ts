/** The contract every model backend implements: the loop talks only to this. */
import type { z } from 'zod';
import type { Message, ReasoningPart, ToolCall } from './messages.ts';

export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly parameters: Readonly<Record<string, unknown>>;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { readonly name: string };

/** Ask for a reply that parses as `schema` (JSON-schema response format where supported). */
export interface StructuredOutputSpec<TOutput = unknown> {
  readonly name: string;
  readonly schema: z.ZodType<TOutput>;
  readonly description?: string;
}

export interface RetryInfo {
  readonly attempt: number;
  readonly delayMs: number;
  readonly error: Error;
}

export interface CompletionRequest<TOutput = unknown> {
  readonly messages: readonly Message[];
  readonly tools?: readonly ToolSpec[];
  readonly toolChoice?: ToolChoice;
  readonly model?: string;
  readonly temperature?: number;
  readonly maxTokens?: number;
  /** How hard a reasoning model thinks; sent only to models whose capabilities accept it. */
  readonly reasoningEffort?: ReasoningEffort;
  readonly output?: StructuredOutputSpec<TOutput>;
  readonly signal?: AbortSignal;
  readonly onRetry?: (info: RetryInfo) => void;
}

export type ReasoningEffort = 'minimal' | 'low' | 'medium' | 'high';

export interface Usage {
  /** Every input token, cached or not. */
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly totalTokens: number;
  readonly estimated?: true;
  /** Of `promptTokens`, those read from the provider's prompt cache (billed cheaper), when it says. */
  readonly cacheReadTokens?: number;
  /** Of `promptTokens`, those written to the prompt cache (billed dearer), when it says. */
  readonly cacheWriteTokens?: number;
}

export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter' | 'other';

export interface Completion<TOutput = unknown> {
  readonly text: string | null;
  /** The model declined to answer (OpenAI's `message.refusal`); `text` is then `null`. */
  readonly refusal?: string;
  readonly toolCalls: readonly ToolCall[];
  readonly finishReason: FinishReason;
  readonly usage: Usage;
  readonly model: string;
  readonly costUsd?: number;
  readonly output?: TOutput;
  /** The model's reasoning before the reply, when the provider returns it (never part of `text`). */
  readonly reasoning?: readonly ReasoningPart[];
  /** The call's name where calls are recorded (a durable run's effect key): its live deltas carry the same, so both show as one message. */
  readonly call?: string;
}

/** What `stream()` yields: deltas as they arrive, then exactly one `done` with the assembled reply. */
export type StreamEvent<TOutput = unknown> =
  | { readonly type: 'text.delta'; readonly delta: string }
  | { readonly type: 'reasoning.delta'; readonly delta: string }
  | {
      readonly type: 'toolcall.delta';
      readonly index: number;
      readonly id?: string;
      readonly name?: string;
      readonly argumentsDelta: string;
    }
  | { readonly type: 'done'; readonly completion: Completion<TOutput> };

export interface InferenceProvider {
  readonly name: string;
  readonly defaultModel: string;
  readonly supportsNativeTools: boolean;
  readonly supportsStructuredOutput: boolean;
  complete<TOutput = unknown>(request: CompletionRequest<TOutput>): Promise<Completion<TOutput>>;
  stream<TOutput = unknown>(request: CompletionRequest<TOutput>): AsyncIterable<StreamEvent<TOutput>>;
}

export const ZERO_USAGE: Usage = Object.freeze({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });

/** The sum; estimated when either part is. */
export function addUsage(a: Usage, b: Usage): Usage {
  const sum: Usage = {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    ...(a.estimated === true || b.estimated === true ? { estimated: true as const } : {}),
  };
  // Cache counts appear only once some call reported them, so plain usage stays plain.
  if (a.cacheReadTokens === undefined && b.cacheReadTokens === undefined && a.cacheWriteTokens === undefined && b.cacheWriteTokens === undefined) return sum;
  return {
    ...sum,
    cacheReadTokens: (a.cacheReadTokens ?? 0) + (b.cacheReadTokens ?? 0),
    cacheWriteTokens: (a.cacheWriteTokens ?? 0) + (b.cacheWriteTokens ?? 0),
  };
}

/** The sizes a context-length error reported, in the server's tokens, when it said them. */
export interface ContextLengthDetails {
  readonly limitTokens?: number;
  readonly promptTokens?: number;
  /** Tokens the request reserved for the reply (`max_tokens`), counted against the window. */
  readonly completionTokens?: number;
}
