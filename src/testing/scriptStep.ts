/**
 * One step of a scripted model, and how a step becomes the `Completion` a real provider would
 * have returned. Kept apart from the provider so complete() and stream() share one builder and
 * therefore always agree.
 */
import { ConfigurationError } from '../core/errors.ts';
import { StructuredOutputError } from '../inference/errors.ts';
import { contentText, type Message, type ToolCall } from '../core/messages.ts';
import type { Completion, CompletionRequest, FinishReason, StructuredOutputSpec, Usage } from '../core/provider.ts';

/** A tool call in a script. Object arguments are sent as their JSON text. */
export interface ScriptToolCall {
  /** Defaults to `call_<callIndex>_<i>`, deterministic across runs. */
  readonly id?: string;
  readonly name: string;
  /** A string is sent verbatim — use one to script malformed arguments. */
  readonly arguments: string | Readonly<Record<string, unknown>>;
}

/** What the scripted model answers to one call. Every field is optional. */
export interface ScriptStep {
  /** Reply text. */
  readonly text?: string;
  readonly toolCalls?: readonly ScriptToolCall[];
  /**
   * Structured output: sent as its JSON text and, when the request asks for `output`,
   * validated against `request.output.schema`; a mismatch rejects with a StructuredOutputError.
   */
  readonly output?: unknown;
  /** Overrides the estimate (chars/4, rounded up) field by field. */
  readonly usage?: Partial<Usage>;
  /** Wait this long before answering (or failing); abortable. 0/absent: no timer at all. */
  readonly delayMs?: number;
  /** Fail this call (after `delayMs`) instead of answering. */
  readonly error?: Error | (() => Error);
  /** How stream() splits the text; must concatenate to it. Default: word-sized pieces. */
  readonly chunks?: readonly string[];
  /** Defaults to `tool_calls` when there are tool calls, else `stop`. */
  readonly finishReason?: FinishReason;
  /** stream() only: throw after this many events, before `done` (a connection cut mid-reply). */
  readonly streamCut?: { readonly afterEvents: number; readonly error?: Error | (() => Error) };
}

/** A list of steps answered in order, or a function choosing the step for each call. */
export type Script =
  | readonly ScriptStep[]
  | ((request: CompletionRequest, callIndex: number) => ScriptStep | undefined);

/**
 * Resolve an error-or-factory field (a factory gives a fresh error, and stack, per use).
 *
 * @example
 * ```ts
 * makeError(() => new Error('boom')).message; // 'boom'
 * ```
 */
export function makeError(error: Error | (() => Error)): Error {
  return typeof error === 'function' ? error() : error;
}

/**
 * Characters a token estimate is based on: contents, tool names and argument texts. One pass
 * over the messages, reading lengths only.
 *
 * @example
 * ```ts
 * messageChars([{ role: 'user', content: 'hello' }]); // 5
 * ```
 */
export function messageChars(messages: readonly Message[]): number {
  let chars = 0;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as Message;
    chars += message.role === 'user' ? contentText(message.content).length : (message.content?.length ?? 0);
    if (message.role === 'assistant' && message.toolCalls !== undefined) {
      for (const call of message.toolCalls) chars += call.name.length + call.arguments.length;
    }
  }
  return chars;
}

/**
 * The reply text a step produces (before any structured-output check): `text`, else the JSON
 * of `output`, else the joined `chunks`, else `null` for a tool-calls-only reply or `''`.
 *
 * @example
 * ```ts
 * stepText({ output: { a: 1 } }, false); // '{"a":1}'
 * ```
 */
export function stepText(step: ScriptStep, hasToolCalls: boolean): string | null {
  let text: string | null;
  if (step.text !== undefined) text = step.text;
  else if (step.output !== undefined) text = JSON.stringify(step.output);
  else if (step.chunks !== undefined) text = step.chunks.join('');
  else text = hasToolCalls ? null : '';
  if (step.chunks !== undefined && step.chunks.join('') !== (text ?? '')) {
    throw new ConfigurationError(
      `A script step's chunks (${JSON.stringify(step.chunks.join(''))}) do not concatenate to its text (${JSON.stringify(text)}). ` +
        'Make the chunks spell the text exactly, or leave chunks out.',
    );
  }
  return text;
}

/**
 * Build the completion for `step` (answering call number `callIndex`). Throws a StructuredOutputError (carrying the
 * completion) when structured output was requested and a reply without tool calls does not match the schema, as
 * `openAICompatible` does.
 *
 * @example
 * ```ts
 * buildCompletion({ text: 'hi' }, { messages: [] }, 0, 'scripted-model').finishReason; // 'stop'
 * ```
 */
export function buildCompletion<TOutput>(
  step: ScriptStep,
  request: CompletionRequest<TOutput>,
  callIndex: number,
  model: string,
): Completion<TOutput> {
  const scripted = step.toolCalls;
  const toolCalls: ToolCall[] = [];
  let replyChars = 0;
  if (scripted !== undefined) {
    for (let i = 0; i < scripted.length; i++) {
      const call = scripted[i] as ScriptToolCall;
      const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
      toolCalls.push({ id: call.id ?? `call_${callIndex}_${i}`, name: call.name, arguments: args });
      replyChars += call.name.length + args.length;
    }
  }
  const text = stepText(step, toolCalls.length > 0);
  replyChars += text?.length ?? 0;

  const promptTokens = step.usage?.promptTokens ?? Math.ceil(messageChars(request.messages) / 4);
  const completionTokens = step.usage?.completionTokens ?? Math.ceil(replyChars / 4);
  const usage: Usage = {
    promptTokens,
    completionTokens,
    totalTokens: step.usage?.totalTokens ?? promptTokens + completionTokens,
  };
  const completion: Completion<TOutput> = {
    text,
    toolCalls,
    finishReason: step.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    usage,
    model,
  };
  // A reply that calls tools is not the answer yet.
  if (request.output === undefined || toolCalls.length > 0) return completion;
  try {
    return { ...completion, output: parseOutput(step, text, request.output) };
  } catch (error) {
    if (error instanceof StructuredOutputError) error.completion = completion;
    throw error;
  }
}

function parseOutput<TOutput>(step: ScriptStep, text: string | null, spec: StructuredOutputSpec<TOutput>): TOutput {
  const name = spec.name;
  let value: unknown = step.output;
  if (value === undefined) {
    try {
      value = JSON.parse(text ?? '');
    } catch (cause) {
      const issue = { code: 'custom' as const, path: [], message: 'the scripted reply is not JSON; give the step an `output` value', input: undefined };
      throw new StructuredOutputError(name, [issue], text, { cause });
    }
  }
  const result = spec.schema.safeParse(value);
  // Wrong on purpose is fine: it tests the repair of a mismatch.
  if (!result.success) throw new StructuredOutputError(name, result.error.issues, text, { cause: result.error });
  return result.data;
}
