/** An answer that does not match the schema becomes a repair turn: the reply stays, followed by what was wrong with it. */
import { z } from 'zod';
import type { Message, ToolCall } from '../core/messages.ts';
import type { StructuredOutputSpec, ToolSpec } from '../core/provider.ts';
import type { ReasonOutput } from '../core/run.ts';
import { describeError } from '../core/errors.ts';
import { StructuredOutputError } from '../inference/errors.ts';
import { parseStructuredOutput } from '../inference/structuredOutput.ts';

/** The tool a model without structured output answers through. */
export const FINAL_ANSWER_TOOL = 'final_answer';

export interface AnswerSpec {
  readonly spec: StructuredOutputSpec;
  /** The provider constrains replies to the schema; else the final tool. */
  readonly native: boolean;
  readonly tool?: ToolSpec;
}

export function answerSpec(schema: z.ZodType, native: boolean): AnswerSpec {
  const spec: StructuredOutputSpec = { name: 'final_answer', schema, description: 'The final answer of the run.' };
  if (native) return { spec, native };
  let parameters: Record<string, unknown>;
  try {
    const { $schema: _ignored, ...rest } = z.toJSONSchema(schema) as Record<string, unknown>;
    parameters = rest;
  } catch (error) {
    parameters = { type: 'object', description: `(schema not expressible as JSON Schema: ${describeError(error)})` };
  }
  return {
    spec,
    native,
    tool: {
      name: FINAL_ANSWER_TOOL,
      description: 'Give your final answer by calling this tool once, with the answer as its arguments. Call it only when you are done.',
      parameters,
    },
  };
}

const issuesText = (error: StructuredOutputError): string =>
  error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length === 0 ? '(root)' : issue.path.join('.')}: ${issue.message}`)
    .join('; ');

function check(text: string | null, answer: AnswerSpec): { ok: true; value: unknown } | { ok: false; why: string } {
  try {
    return { ok: true, value: parseStructuredOutput(text, answer.spec) };
  } catch (error) {
    if (error instanceof StructuredOutputError) return { ok: false, why: issuesText(error) };
    throw error;
  }
}

/** A reply with its answer checked: `output` set, or `repair` with what to fix; a reply calling other tools passes unchanged. */
export function checkAnswer(reply: ReasonOutput, answer: AnswerSpec): ReasonOutput {
  const final = answer.native ? undefined : reply.toolCalls.find((call) => call.name === FINAL_ANSWER_TOOL);
  if (final === undefined && reply.toolCalls.length > 0) return reply;
  if (final !== undefined) return checkFinalCall(reply, final, answer);
  const checked = check(reply.text, answer);
  if (checked.ok) return { ...reply, output: checked.value };
  const how = answer.native ? 'Reply with JSON only, matching the required schema.' : `Call the ${FINAL_ANSWER_TOOL} tool with your answer as its arguments.`;
  return { ...reply, repair: [{ role: 'user', content: `Your final answer does not match the required output schema (${checked.why}). ${how}` }] };
}

function checkFinalCall(reply: ReasonOutput, final: ToolCall, answer: AnswerSpec): ReasonOutput {
  const checked = check(final.arguments, answer);
  // Calls beside the final answer are not made: the answer ends the run, or its repair comes first.
  if (checked.ok) return { text: JSON.stringify(checked.value), toolCalls: [], usage: reply.usage, costUsd: reply.costUsd, output: checked.value };
  const repair: Message = {
    role: 'tool',
    toolCallId: final.id,
    name: FINAL_ANSWER_TOOL,
    content: `The answer does not match the required schema (${checked.why}). Call ${FINAL_ANSWER_TOOL} again with corrected arguments.`,
    isError: true,
  };
  return { ...reply, toolCalls: [final], repair: [repair] };
}

/** The reply a provider's rejected structured output stood for, so the loop can repair it instead of failing. */
export function rejectedReply(error: unknown): ReasonOutput | undefined {
  if (!(error instanceof StructuredOutputError) || error.completion === undefined) return undefined;
  const { completion } = error;
  return { text: completion.text, toolCalls: completion.toolCalls, usage: completion.usage, costUsd: completion.costUsd ?? 0 };
}
