// What useChat posts, read into a run's start or the answers to its wait: the chat's messages become the
// run's history as the run had them, each file the model can take in its place, any other a 400.
import { z } from 'zod';
import { isJsonObjectText, type ContentPart, type Message, type ToolCall } from '../core/messages.ts';
import { defined } from '../core/defined.ts';
import { WebRequestError } from './errors.ts';
import { oneLine } from './handler.ts';
import { listOf } from './listOf.ts';
import type { ResumeRequest, StartRequest } from './protocol.ts';

// Only what is read is checked; the page's other fields and parts pass untouched.
const Part = z.looseObject({ type: z.string() });
type UiPart = z.infer<typeof Part>;
const FileUiPart = z.looseObject({ type: z.literal('file'), mediaType: z.string().min(1), url: z.string().min(1), filename: z.string().optional() });
const UiMessage = z.looseObject({ id: z.string(), role: z.enum(['system', 'user', 'assistant']), parts: listOf(Part) });
const ChatRequest = z.looseObject({ id: z.string().min(1), messages: listOf(UiMessage, 1) });
const ToolPart = z.looseObject({
  type: z.string(),
  toolCallId: z.string(),
  toolName: z.string().optional(),
  state: z.string(),
  input: z.unknown().optional(),
  output: z.unknown().optional(),
  errorText: z.string().optional(),
  approval: z.looseObject({ id: z.string(), approved: z.boolean().optional(), reason: z.string().optional() }).optional(),
  toolMetadata: z.looseObject({ runId: z.string().optional() }).optional(),
  callProviderMetadata: z.looseObject({ actorloop: z.looseObject({ extraContent: z.unknown() }).optional() }).optional(),
});
type UiMessage = z.infer<typeof UiMessage>;
type ToolPart = z.infer<typeof ToolPart>;

export function parseStart(body: unknown): StartRequest | ResumeRequest {
  const parsed = ChatRequest.safeParse(body);
  if (!parsed.success) throw new WebRequestError(400, `The body is not a chat request ({ id, messages: UIMessage[] }, what useChat sends): ${oneLine(parsed.error)}.`);
  const { id, messages } = parsed.data;
  const last = messages.at(-1) as UiMessage;
  if (last.role === 'assistant') return resumeOf(last);
  const content = last.role === 'user' ? userContent(last, messages.length) : '';
  const given = typeof content === 'string' ? content.trim() !== '' : content.some((part) => part.type !== 'text' || part.text.trim() !== '');
  if (!given) throw new WebRequestError(400, 'The last message must be a user message with text or files (the task of the run), or the assistant message answering a tool approval request.');
  const history = messages.slice(0, -1).flatMap((message, index) => toMessages(message, index + 1));
  return { task: textOf(last), ...(typeof content === 'string' ? {} : { content }), history, threadId: id };
}

/** Its id is the served run's; a sub-run's call says its run in its `toolMetadata` and its id is `<run>/<call>`. */
function resumeOf(message: UiMessage): ResumeRequest {
  const byRun = new Map<string, { approved: string[]; rejected: { toolCallId: string; reason?: string }[] }>();
  for (const part of toolParts(message)) {
    if (part.state !== 'approval-responded' || part.approval?.approved === undefined) continue;
    const runId = part.toolMetadata?.runId ?? message.id;
    const prefix = runId === message.id ? '' : `${runId}/`;
    if (!part.toolCallId.startsWith(prefix)) throw new WebRequestError(400, `Tool call ${part.toolCallId.slice(0, 80)} is not one of run ${runId}: send the tool parts as the stream gave them.`);
    const toolCallId = part.toolCallId.slice(prefix.length);
    const run = byRun.get(runId) ?? { approved: [], rejected: [] };
    byRun.set(runId, run);
    if (part.approval.approved) run.approved.push(toolCallId);
    else run.rejected.push({ toolCallId, ...(part.approval.reason === undefined ? {} : { reason: part.approval.reason }) });
  }
  // An answer the page gave before stays in the message until its call's output reaches it: the handler skips those.
  const [first, ...more] = [...byRun].map(([runId, { approved, rejected }]) => ({ runId, approved, rejected }));
  if (first === undefined) {
    throw new WebRequestError(400, 'The last message is an assistant message with no answered tool approval: send a user message to start a run, or answer the approval request with addToolApprovalResponse.');
  }
  return { resume: { ...first, servedRunId: message.id, ...(more.length === 0 ? {} : { more }) } };
}

function textOf(message: UiMessage): string {
  return message.parts.flatMap((part) => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : [])).join('\n');
}

function toolParts(message: { readonly parts: readonly UiPart[] }): ToolPart[] {
  return message.parts.flatMap((part) => {
    if (part.type !== 'dynamic-tool' && !part.type.startsWith('tool-')) return [];
    const tool = ToolPart.safeParse(part);
    return tool.success ? [tool.data] : [];
  });
}

/** `at`: the message's place in the request, from 1, for the page to find it by. */
function toMessages(whole: UiMessage, at: number): Message[] {
  if (whole.role === 'system') return [{ role: 'system', content: textOf(whole) }];
  if (whole.role === 'user') return [{ role: 'user', content: userContent(whole, at) }];
  // Each step the page shows (begun by a `step-start`) was one model turn: its reply and calls, then their results.
  const steps: UiPart[][] = [[]];
  whole.parts.forEach((part, index) => {
    if (part.type === 'step-start') steps.push([]);
    // A sub-agent's text and calls are in the message too, attributed to its run: they were never the served agent's.
    else if (!bySubRun(part)) {
      if (part.type === 'file') throw new WebRequestError(400, `Message ${at} (assistant), part ${index + 1} is a file: an assistant's files cannot go back to the model here; leave them out of the messages sent.`);
      (steps.at(-1) as UiPart[]).push(part);
    }
  });
  return steps.flatMap((parts) => stepMessages(parts, at));
}

function stepMessages(parts: UiPart[], at: number): Message[] {
  const done = toolParts({ parts }).filter((part) => part.state === 'output-available' || part.state === 'output-error' || part.state === 'output-denied' || (part.state === 'approval-responded' && part.approval?.approved === false));
  const nameOf = (part: ToolPart): string => part.toolName ?? part.type.slice('tool-'.length);
  const toolCalls: ToolCall[] = done.map((part) => ({ id: part.toolCallId, name: nameOf(part), arguments: JSON.stringify(part.input ?? {}), ...signatureOf(part, at) }));
  // The parts of one turn's text are pieces of one reply.
  const text = parts.flatMap((part) => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : [])).join('');
  if (text === '' && toolCalls.length === 0) return [];
  const results: Message[] = done.map((part) => {
    const result = { role: 'tool' as const, toolCallId: part.toolCallId, name: nameOf(part) };
    if (part.state === 'output-available') return { ...result, content: typeof part.output === 'string' ? part.output : JSON.stringify(part.output ?? null) };
    const content = part.state === 'output-error' ? (part.errorText ?? 'The tool failed.') : `A human rejected this call${part.approval?.reason === undefined ? '' : `: ${part.approval.reason}`}.`;
    return { ...result, content, isError: true };
  });
  return [{ role: 'assistant', content: text === '' ? null : text, ...(toolCalls.length === 0 ? {} : { toolCalls }) }, ...results];
}

/** The provider's signature the stream gave the call, which the provider wants back with it; a 400 for one the stream cannot have given. */
function signatureOf(part: ToolPart, at: number): { extraContent?: string } {
  const given = part.callProviderMetadata?.actorloop?.extraContent;
  if (given === undefined) return {};
  if (typeof given !== 'string' || !isJsonObjectText(given)) {
    throw new WebRequestError(400, `Message ${at} (assistant), tool call ${part.toolCallId.slice(0, 80)}: its callProviderMetadata.actorloop.extraContent is not the JSON text of an object: send the tool part back as the stream gave it, or without it.`);
  }
  return { extraContent: given };
}

/** Text alone stays a string; with files, the parts in their order, each file an image or file part, or a 400 saying why not. */
function userContent(message: UiMessage, at: number): string | ContentPart[] {
  if (!message.parts.some((part) => part.type === 'file')) return textOf(message);
  return message.parts.flatMap((part, index): ContentPart[] => {
    if (part.type === 'text' && typeof part.text === 'string') return [{ type: 'text', text: part.text }];
    return part.type === 'file' ? [contentPart(part, `Message ${at}, part ${index + 1}`)] : [];
  });
}

function contentPart(part: UiPart, where: string): ContentPart {
  const file = FileUiPart.safeParse(part);
  if (!file.success) throw new WebRequestError(400, `${where} is not a file part ({ type: 'file', mediaType, url }, what useChat sends): ${oneLine(file.error)}.`);
  const { mediaType, url, filename } = file.data;
  const image = mediaType.toLowerCase().startsWith('image/');
  const data = dataUrlBase64(url);
  // Bytes the model's API would refuse fail the run once it started: refused here, the page can send them again.
  if (data !== undefined && !BASE64.test(data)) throw new WebRequestError(400, `${where} is a data: URL whose bytes are not base64: send the file as the data: URL a FileReader makes of it.`);
  if (data !== undefined) return image ? { type: 'image', data, mediaType } : { type: 'file', data, mediaType, ...defined({ filename }) };
  if (image && /^https?:\/\//i.test(url)) return { type: 'image', url, mediaType };
  const shown = url.slice(0, 60);
  if (image) throw new WebRequestError(400, `${where} is an image at "${shown}": only http(s) URLs and data: URLs reach the model; send the image's bytes as a data: URL.`);
  throw new WebRequestError(400, `${where} is a file (${mediaType}) at "${shown}": files other than images reach the model as bytes only; send it as a data: URL (what useChat makes of the files a person picks).`);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A data: URL's bytes in base64, whichever way the URL carries them; `undefined` for any other URL. */
function dataUrlBase64(url: string): string | undefined {
  const match = /^data:([^,]*),(.*)$/is.exec(url);
  if (match === null) return undefined;
  const body = match[2] as string;
  if (/;base64$/i.test(match[1] as string)) return body;
  try {
    return Buffer.from(decodeURIComponent(body), 'utf8').toString('base64');
  } catch {
    return undefined;
  }
}

/** Set on the parts `attributeAiSdk` gave a sub-run's text, reasoning and calls. */
function bySubRun(part: UiPart): boolean {
  const attributed = (value: unknown, key: string): boolean => typeof value === 'object' && value !== null && key in value;
  return attributed(part.providerMetadata, 'actorloop') || attributed(part.toolMetadata, 'runId');
}
