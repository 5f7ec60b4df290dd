/** `ToolCall.arguments` stays the model's raw text: a malformed argument string is behaviour to feed back, not to lose while parsing. */
import { z } from 'zod';

export const ToolCall = z.object({
  id: z.string().min(1),
  name: z.string(),
  arguments: z.string(),
  /**
   * What the provider attached to the call beyond these (Gemini's thought signature, in `extra_content`), as JSON
   * text: the provider refuses the next request unless the call comes back with it unchanged.
   */
  extraContent: z.string().refine(isJsonObjectText, 'extraContent must be the JSON text of an object').optional(),
});
export type ToolCall = z.infer<typeof ToolCall>;

export const SystemMessage = z.object({ role: z.literal('system'), content: z.string() });
export type SystemMessage = z.infer<typeof SystemMessage>;

export const TextPart = z.object({ type: z.literal('text'), text: z.string() });
export type TextPart = z.infer<typeof TextPart>;

/** An image or file part's bytes: inline base64 `data`, or `ref`, a content hash into the run's blob store, so journals carry only the reference. */
const inlineOrStored = (part: { url?: string | undefined; data?: string | undefined; ref?: string | undefined }): boolean =>
  [part.url, part.data, part.ref].filter((value) => value !== undefined).length === 1;

/** An image: a URL (`https:` or a `data:` URL), or base64 bytes with their media type. */
export const ImagePart = z
  .object({
    type: z.literal('image'),
    url: z.string().min(1).optional(),
    data: z.string().optional(),
    ref: z.string().min(1).optional(),
    mediaType: z.string().optional(),
    /** Decoded size in bytes, set when the bytes are stored by reference. */
    bytes: z.number().int().nonnegative().optional(),
  })
  .refine(inlineOrStored, { message: 'an image part takes exactly one of url, data or ref' })
  .refine((part) => part.url !== undefined || part.mediaType !== undefined, { message: 'an image given as data needs its mediaType' });
export type ImagePart = z.infer<typeof ImagePart>;

export const FilePart = z
  .object({
    type: z.literal('file'),
    data: z.string().optional(),
    ref: z.string().min(1).optional(),
    mediaType: z.string(),
    filename: z.string().optional(),
    bytes: z.number().int().nonnegative().optional(),
  })
  .refine((part) => (part.data === undefined) !== (part.ref === undefined), { message: 'a file part takes exactly one of data or ref' });
export type FilePart = z.infer<typeof FilePart>;

export const ContentPart = z.discriminatedUnion('type', [TextPart, ImagePart, FilePart]);
export type ContentPart = z.infer<typeof ContentPart>;

export const UserMessage = z.object({
  role: z.literal('user'),
  content: z.union([z.string(), z.array(ContentPart).min(1)]),
  /** Set when the content came from outside the user's trust (e.g. `pre-hydration`): the run is tainted from here on. */
  untrusted: z.string().optional(),
});
export type UserMessage = z.infer<typeof UserMessage>;

/**
 * Kept apart from `content` so it is never taken for the answer. A part with a `signature` must go back to its
 * provider byte for byte, or the next request is refused.
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
  reasoning: z.array(ReasoningPart).optional(),
});
export type AssistantMessage = z.infer<typeof AssistantMessage>;

export const ToolMessage = z.object({
  role: z.literal('tool'),
  toolCallId: z.string().min(1),
  name: z.string().optional(),
  content: z.string(),
  isError: z.boolean().optional(),
  /** Set (to the tool's name) when the content came from outside the user's trust: the run is tainted from here on. */
  untrusted: z.string().optional(),
  /** Images the tool returned, for a model that takes images (`content` describes them in text as well). */
  parts: z.array(ImagePart).optional(),
});
export type ToolMessage = z.infer<typeof ToolMessage>;

export const Message = z.discriminatedUnion('role', [SystemMessage, UserMessage, AssistantMessage, ToolMessage]);
export type Message = z.infer<typeof Message>;

/** The text of a reply's reasoning (what `reasoning_content` carries); redacted parts have none. */
export function reasoningText(parts: readonly ReasoningPart[]): string {
  return parts.flatMap((part) => (part.type === 'thinking' ? [part.text] : [])).join('');
}

/** Content as plain text, each image or file as a short marker (for transcripts, summaries, estimates and indexes). */
export function contentText(content: string | readonly ContentPart[]): string {
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : part.type === 'image' ? '[image]' : `[file${part.filename === undefined ? '' : `: ${part.filename}`}]`)).join('\n');
}

export function mediaParts(content: string | readonly ContentPart[]): number {
  if (typeof content === 'string') return 0;
  let count = 0;
  for (const part of content) if (part.type !== 'text') count++;
  return count;
}

export function isJsonObjectText(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
