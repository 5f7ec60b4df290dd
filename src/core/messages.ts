/**
 * Conversation messages: the schema and the type share a name (schema first at the edges).
 *
 * Tool-call arguments stay the raw string the model produced: a malformed argument string is
 * model behaviour the loop must feed back, not something to lose while parsing.
 */
import { z } from 'zod';

/** One tool call proposed by the model. `arguments` is the raw JSON text the model sent. */
export const ToolCall = z.object({
  id: z.string().min(1),
  name: z.string(),
  arguments: z.string(),
});
export type ToolCall = z.infer<typeof ToolCall>;

export const SystemMessage = z.object({ role: z.literal('system'), content: z.string() });
export type SystemMessage = z.infer<typeof SystemMessage>;

export const UserMessage = z.object({
  role: z.literal('user'),
  content: z.string(),
  /** Set when the content came from outside the user's trust (e.g. `pre-hydration`): the run is tainted from here on. */
  untrusted: z.string().optional(),
});
export type UserMessage = z.infer<typeof UserMessage>;

/**
 * One piece of the model's reasoning before its reply. Kept apart from `content` so it is never
 * taken for the answer. `signature` is the provider's seal over the text (Anthropic's thinking
 * blocks): such a part must go back to that provider byte for byte, or the next request is
 * refused. `redacted` parts carry only the provider's encrypted `data`.
 */
export const ReasoningPart = z.discriminatedUnion('type', [
  z.object({ type: z.literal('thinking'), text: z.string(), signature: z.string().optional() }),
  z.object({ type: z.literal('redacted'), data: z.string() }),
]);
export type ReasoningPart = z.infer<typeof ReasoningPart>;

export const AssistantMessage = z.object({
  role: z.literal('assistant'),
  /** Text of the reply; `null` when the reply is only tool calls. */
  content: z.string().nullable(),
  toolCalls: z.array(ToolCall).optional(),
  /** The reasoning that preceded this reply, in the order the model produced it. */
  reasoning: z.array(ReasoningPart).optional(),
});
export type AssistantMessage = z.infer<typeof AssistantMessage>;

export const ToolMessage = z.object({
  role: z.literal('tool'),
  toolCallId: z.string().min(1),
  /** Tool name, kept for providers (and readers) that want it next to the result. */
  name: z.string().optional(),
  content: z.string(),
  /** True when the content reports a failure (error, denial, timeout) rather than a result. */
  isError: z.boolean().optional(),
  /** Set (to the tool's name) when the content came from outside the user's trust: the run is tainted from here on. */
  untrusted: z.string().optional(),
});
export type ToolMessage = z.infer<typeof ToolMessage>;

export const Message = z.discriminatedUnion('role', [SystemMessage, UserMessage, AssistantMessage, ToolMessage]);
export type Message = z.infer<typeof Message>;

/** The text of a reply's reasoning (what `reasoning_content` carries); redacted parts have none. */
export function reasoningText(parts: readonly ReasoningPart[]): string {
  return parts.flatMap((part) => (part.type === 'thinking' ? [part.text] : [])).join('');
}
