/** complete() and stream() share this one builder, so they always agree. */
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

export interface ScriptStep {
  readonly text?: string;
  readonly toolCalls?: readonly ScriptToolCall[];
  /** Sent as its JSON text and, when the request asks for `output`, validated against its schema. */
  readonly output?: unknown;
  /** Overrides the estimate (chars/4, rounded up) field by field. */
  readonly usage?: Partial<Usage>;
  /** Wait this long before answering (or failing); abortable. 0/absent: no timer at all. */
  readonly delayMs?: number;
  readonly error?: Error | (() => Error);
  /** How stream() splits the text; must concatenate to it. Default: word-sized pieces. */
  readonly chunks?: readonly string[];
  readonly finishReason?: FinishReason;
  /** stream() only: throw after this many events, before `done` (a connection cut mid-reply). */
  readonly streamCut?: { readonly afterEvents: number; readonly error?: Error | (() => Error) };
}

export type Script =
  | readonly ScriptStep[]
  | ((request: CompletionRequest, callIndex: number) => ScriptStep | undefined);

/** A factory gives a fresh error, and stack, per use. */
export function makeError(error: Error | (() => Error)): Error {
  return typeof error === 'function' ? error() : error;
}

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

/** `text`, else the JSON of `output`, else the joined `chunks`; `null` for a tool-calls-only reply. */
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

/** Throws a StructuredOutputError carrying the completion when a reply without tool calls fails the schema, as `openAICompatible` does. */
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
