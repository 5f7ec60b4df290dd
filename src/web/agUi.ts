// A wait for a human ends the AG-UI run with the interrupt outcome; resume entries answering it continue
// the same loop run as a new AG-UI run.
import { EventType, type Event as AgUiEvent, type Message as AgUiMessage, type ResumeEntry } from '@ag-ui/core';
import { z } from 'zod';
import { ContentPartSchema, ContextSchema, MessageSchema, ResumeEntrySchema, RunAgentInputSchema, ToolCallSchema, ToolSchema } from '@ag-ui/core/schemas';
import { EventEncoder } from '@ag-ui/encoder';
import type { Agent } from '../agent/types.ts';
import { AgUiEncoder } from '../events/agUiEncoder.ts';
import { isJsonObjectText, type Message } from '../core/messages.ts';
import { WebRequestError } from './errors.ts';
import { createRunHandler, oneLine, type WebHandler, type WebHandlerOptions } from './handler.ts';
import { listOf } from './listOf.ts';
import type { ResumeRequest, RunView, StartRequest, SubRun, TreeWaits, WebProtocol } from './protocol.ts';

/** Sent before the interrupt outcome: answer with resume entries, or with `runs/:runId/approve` or `reject`. */
export const AG_UI_INTERRUPT = 'actorloop.human.awaiting';

/**
 * @example
 * ```ts
 * const handler = createAgUiHandler(agent); // a Next.js route: export { handler as GET, handler as POST }
 * ```
 */
export function createAgUiHandler(agent: Agent, options: WebHandlerOptions = {}): WebHandler {
  return createRunHandler(agent, agUiProtocol, options);
}

const sse = new EventEncoder();

export const agUiProtocol: WebProtocol<AgUiEvent> = {
  parseStart,
  encoder: (view) => new AgUiEncoder(view, { interrupts: true }),
  frame,
  attribute: attributeAgUi,
  treeWaits: agUiTreeWaits,
  deltas: {
    joins: (first, next) => first.type === EventType.TEXT_MESSAGE_CONTENT && next.type === EventType.TEXT_MESSAGE_CONTENT && first.messageId === next.messageId,
    text: (event) => (event.type === EventType.TEXT_MESSAGE_CONTENT ? event.delta : ''),
    join: (first, delta) => (first.type === EventType.TEXT_MESSAGE_CONTENT ? { ...first, delta } : first),
  },
};

function attributeAgUi(event: AgUiEvent, run: SubRun): AgUiEvent {
  const subagentRunId = run.runId;
  // Call ids are unique within a run only; a page matches calls across the whole stream.
  const own = (id: string): string => `${run.runId}/${id}`;
  switch (event.type) {
    case EventType.RUN_STARTED:
      return { type: EventType.SUBAGENT_STARTED, subagentRunId, name: run.agentId, ...(run.parentSubRunId === undefined ? {} : { parentSubagentRunId: run.parentSubRunId }) };
    case EventType.RUN_FINISHED:
      if (event.outcome?.type === 'cancelled') return { type: EventType.SUBAGENT_ERROR, subagentRunId, message: `Agent ${run.agentId}'s run was cancelled.`, code: 'cancelled' };
      // A sub-run waiting for a human is suspended; the served run's AG-UI run then ends with its interrupts.
      if (event.outcome?.type === 'interrupt') return { type: EventType.SUBAGENT_FINISHED, subagentRunId, outcome: { type: 'suspended', interruptIds: event.outcome.interrupts.map((i) => i.id) } };
      return { type: EventType.SUBAGENT_FINISHED, subagentRunId, result: event.result, outcome: { type: 'success' } };
    case EventType.RUN_ERROR:
      return { type: EventType.SUBAGENT_ERROR, subagentRunId, message: event.message, ...(event.code === undefined ? {} : { code: event.code }) };
    case EventType.MESSAGES_SNAPSHOT:
      // A snapshot names each message's owner in the messages themselves.
      return event;
    case EventType.TOOL_CALL_RESULT:
      return { ...event, toolCallId: own(event.toolCallId), messageId: own(event.messageId), subagentRunId };
    case EventType.TOOL_CALL_START:
    case EventType.TOOL_CALL_ARGS:
    case EventType.TOOL_CALL_END:
      return { ...event, toolCallId: own(event.toolCallId), subagentRunId };
    case EventType.REASONING_ENCRYPTED_VALUE:
      return { ...event, entityId: event.subtype === 'tool-call' ? own(event.entityId) : event.entityId, subagentRunId };
    default:
      return { ...event, subagentRunId };
  }
}

/**
 * A sub-run's wait ends the AG-UI run with its interrupts, each naming the sub-run; what is open then (sub-agents,
 * steps, messages, calls) is closed there. The next run opens each run's parts again before that run's next event,
 * parents first: runs interleave differently on each reading, and what a run had open is its own events' to say.
 */
function agUiTreeWaits(view: RunView, fromStop: boolean): TreeWaits<AgUiEvent> {
  /** By part, the event that opened it and the run it belongs to ('' the served run), as the runs' own events say. */
  const open = new Map<string, { readonly opener: AgUiEvent; readonly run: string }>();
  /** Open parts the page saw closed at a wait. */
  const shut = new Set<string>();
  const parents = new Map<string, string>();
  // Where a wait ended the last response, the page has everything closed, whatever order the runs come in now.
  let runShut = fromStop;
  let runId = view.runId;
  const reopen = (run: string, out: AgUiEvent[]): void => {
    const chain = [run];
    for (let at = run; at !== ''; ) chain.unshift((at = parents.get(at) ?? ''));
    for (const owner of chain) for (const [key, part] of open) if (part.run === owner && shut.delete(key)) out.push(part.opener);
  };
  return {
    pass(event, sent) {
      const run = 'subagentRunId' in event && typeof event.subagentRunId === 'string' ? event.subagentRunId : '';
      if (event.type === EventType.SUBAGENT_STARTED) parents.set(run, event.parentSubagentRunId ?? '');
      const out: AgUiEvent[] = [];
      if (sent || !fromStop) {
        if (event.type === EventType.RUN_STARTED) runId = event.runId;
        else {
          if (runShut) {
            runId = view.resumedAs ?? view.runId;
            out.push({ type: EventType.RUN_STARTED, threadId: view.threadId, runId });
          }
          reopen(run, out);
        }
        runShut = false;
      }
      const part = partOf(event);
      if (part?.opens === true) open.set(part.key, { opener: event, run });
      else if (part !== undefined) open.delete(part.key);
      if (part?.opens === true && !sent && fromStop) shut.add(part.key);
      else if (part !== undefined) shut.delete(part.key);
      // The served run's own end names the AG-UI run the page is in, which a resume renamed.
      out.push(event.type === EventType.RUN_FINISHED ? { ...event, runId } : event);
      // Also what the page has: every reading gives an event and what it opens again the same places (and ids).
      return out;
    },
    closed(opener) {
      const part = partOf(opener);
      if (part?.opens !== true) return;
      open.set(part.key, { opener, run: 'subagentRunId' in opener && typeof opener.subagentRunId === 'string' ? opener.subagentRunId : '' });
      shut.add(part.key);
    },
    owner: (event) => ('subagentRunId' in event && typeof event.subagentRunId === 'string' ? event.subagentRunId : ''),
    suspend(own, sub) {
      const end = own.find((event) => event?.type === EventType.RUN_FINISHED);
      if (end?.type !== EventType.RUN_FINISHED || end.outcome?.type !== 'interrupt') return undefined;
      // Call ids are the sub-run's own; the stream names its calls `<run>/<call>`.
      const interrupts = end.outcome.interrupts.map((interrupt) => ({
        ...interrupt,
        subagentRunId: sub.runId,
        ...(interrupt.toolCallId === undefined ? {} : { toolCallId: `${sub.runId}/${interrupt.toolCallId}` }),
      }));
      const closing = [...open].filter(([key]) => !shut.has(key)).toReversed();
      for (const [key] of closing) shut.add(key);
      // The page's AG-UI run ended at this wait already (a reconnect to it): a new one says it again.
      const restart: AgUiEvent[] = runShut ? [{ type: EventType.RUN_STARTED, threadId: view.threadId, runId: (runId = view.resumedAs ?? view.runId) }] : [];
      runShut = true;
      return [...restart, ...closing.map(([, part]) => closer(part.opener)), { type: EventType.RUN_FINISHED, threadId: view.threadId, runId, outcome: { type: 'interrupt', interrupts } }];
    },
  };
}

/** The part an event opens or closes. */
function partOf(event: AgUiEvent): { readonly key: string; readonly opens: boolean } | undefined {
  const by = 'subagentRunId' in event && typeof event.subagentRunId === 'string' ? event.subagentRunId : '';
  switch (event.type) {
    case EventType.SUBAGENT_STARTED:
    case EventType.SUBAGENT_FINISHED:
    case EventType.SUBAGENT_ERROR:
      return { key: `agent:${event.subagentRunId}`, opens: event.type === EventType.SUBAGENT_STARTED };
    case EventType.STEP_STARTED:
    case EventType.STEP_FINISHED:
      return { key: `step:${by}:${event.stepName}`, opens: event.type === EventType.STEP_STARTED };
    case EventType.TEXT_MESSAGE_START:
    case EventType.TEXT_MESSAGE_END:
      return { key: `text:${event.messageId}`, opens: event.type === EventType.TEXT_MESSAGE_START };
    case EventType.TOOL_CALL_START:
    case EventType.TOOL_CALL_END:
      return { key: `call:${event.toolCallId}`, opens: event.type === EventType.TOOL_CALL_START };
    default:
      return undefined;
  }
}

/** The event that closes the part `opened` opened. */
function closer(opened: AgUiEvent): AgUiEvent {
  const by = 'subagentRunId' in opened && typeof opened.subagentRunId === 'string' ? { subagentRunId: opened.subagentRunId } : {};
  switch (opened.type) {
    case EventType.SUBAGENT_STARTED:
      return { type: EventType.SUBAGENT_FINISHED, subagentRunId: opened.subagentRunId, outcome: { type: 'suspended' } };
    case EventType.STEP_STARTED:
      return { type: EventType.STEP_FINISHED, stepName: opened.stepName, ...by };
    case EventType.TEXT_MESSAGE_START:
      return { type: EventType.TEXT_MESSAGE_END, messageId: opened.messageId, ...by };
    case EventType.TOOL_CALL_START:
      return { type: EventType.TOOL_CALL_END, toolCallId: opened.toolCallId, ...by };
    default:
      return opened;
  }
}

/** AG-UI's encoder only drops null optional fields: JSON without a null anywhere is the frame as it is. */
function frame(event: AgUiEvent): string {
  const json = JSON.stringify(event);
  return json.includes('null') ? sse.encodeSSE(event) : `data: ${json}\n\n`;
}

/** A message's own lists, each to its first bad item, before the message itself: AG-UI's schema would check them all. */
const MessageLists = z.looseObject({
  toolCalls: listOf(ToolCallSchema).optional(),
  content: z.union([z.string(), listOf(ContentPartSchema), z.record(z.string(), z.unknown())]).optional(),
});

/** AG-UI's RunAgentInput with its lists checked each to its first bad item (`listOf`), in one pass. */
const RunInput = RunAgentInputSchema.extend({
  messages: listOf(MessageLists.pipe(MessageSchema)),
  tools: listOf(ToolSchema).default([]),
  context: listOf(ContextSchema).default([]),
  resume: listOf(ResumeEntrySchema).optional(),
});

function parseStart(body: unknown): StartRequest | ResumeRequest {
  const parsed = RunInput.safeParse(body);
  if (!parsed.success) throw new WebRequestError(400, `The body is not an AG-UI RunAgentInput: ${oneLine(parsed.error)}.`);
  const input = parsed.data;
  if (input.resume !== undefined && input.resume.length > 0) return resumeOf(input.resume, input.runId, input.threadId);
  const messages = input.messages as AgUiMessage[];
  const last = messages.at(-1);
  const task = last?.role === 'user' ? textOf(last.content) : '';
  if (task.trim() === '') throw new WebRequestError(400, 'The last message must be a user message with text: it is the task of the run.');
  return { task, history: answeredOnly(messages.slice(0, -1).flatMap((message, index) => toMessage(message, index + 1))), runId: input.runId, threadId: input.threadId };
}

/** A call the page has no result for (an interrupt the person left unanswered) is left out: providers refuse a call without its result. */
function answeredOnly(history: readonly Message[]): Message[] {
  const answered = new Set(history.flatMap((message) => (message.role === 'tool' ? [message.toolCallId] : [])));
  return history.flatMap((message): Message[] => {
    if (message.role !== 'assistant' || message.toolCalls === undefined || message.toolCalls.every((call) => answered.has(call.id))) return [message];
    const { toolCalls, ...rest } = message;
    const kept = toolCalls.filter((call) => answered.has(call.id));
    if (kept.length > 0) return [{ ...rest, toolCalls: kept }];
    return rest.content === null || rest.content === '' ? [] : [rest];
  });
}

/** A held call's interrupt `responseSchema`. */
const Decision = z.strictObject({ approved: z.boolean(), reason: z.string().max(10_000).optional() });

/** Cancelled is a rejection; resolved carries a decision, or an elicitation's answer. A sub-run's interrupt is answered in the thread's served run. */
function resumeOf(entries: readonly ResumeEntry[], resumedAs: string, threadId: string): ResumeRequest {
  const runIds = new Set<string>();
  const approved: string[] = [];
  const rejected: { toolCallId: string; reason?: string }[] = [];
  const answers: Record<string, unknown> = {};
  for (const entry of entries) {
    const cut = entry.interruptId.indexOf('/');
    if (cut <= 0) throw new WebRequestError(400, `Interrupt id "${entry.interruptId.slice(0, 80)}" is not one this server gave: answer the interrupts of the RUN_FINISHED that ended the run.`);
    runIds.add(entry.interruptId.slice(0, cut));
    const toolCallId = entry.interruptId.slice(cut + 1);
    if (entry.status === 'cancelled') {
      rejected.push({ toolCallId, reason: 'The person asked cancelled the request.' });
      continue;
    }
    const decision = Decision.safeParse(entry.payload);
    if (!decision.success) answers[toolCallId] = entry.payload;
    else if (decision.data.approved) approved.push(toolCallId);
    else rejected.push({ toolCallId, ...(decision.data.reason === undefined ? {} : { reason: decision.data.reason }) });
  }
  const [runId, ...others] = runIds;
  if (runId === undefined || others.length > 0) throw new WebRequestError(400, `The resume entries answer interrupts of ${runIds.size} runs (${[...runIds].join(', ')}): answer those of one run per request.`);
  return { resume: { runId, approved: [...approved, ...Object.keys(answers)], rejected, answers, resumedAs, threadId } };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.flatMap((part: { type?: unknown; text?: unknown }) => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : [])).join('\n');
}

/**
 * Activity and reasoning messages are the page's own and are left out, as are a sub-agent's: its run had them, the served agent never did.
 * `at`: the message's place in the request, from 1, for the page to find it by.
 */
function toMessage(message: AgUiMessage, at: number): Message[] {
  if (message.subagentRunId !== undefined) return [];
  switch (message.role) {
    case 'system':
    case 'developer':
      return [{ role: 'system', content: message.content }];
    case 'user':
      return [{ role: 'user', content: textOf(message.content) }];
    case 'assistant': {
      const toolCalls = (message.toolCalls ?? []).map((call) => ({
        id: call.id,
        name: call.function.name,
        arguments: call.function.arguments,
        ...(call.encryptedValue === undefined ? {} : { extraContent: signature(call.encryptedValue, `Message ${at} (assistant), tool call ${call.id.slice(0, 80)}: its encryptedValue`) }),
      }));
      return [{ role: 'assistant', content: message.content ?? null, ...(toolCalls.length === 0 ? {} : { toolCalls }) }];
    }
    case 'tool':
      return [{ role: 'tool', toolCallId: message.toolCallId, content: textOf(message.content), ...(message.error === undefined ? {} : { isError: true }) }];
    default:
      return [];
  }
}

/** A call's signature goes to the provider as the object it gave; the page keeps it as that object's JSON text. */
function signature(text: string, what: string): string {
  if (!isJsonObjectText(text)) throw new WebRequestError(400, `${what} is not the JSON text of an object: send the tool call back as the stream gave it, or without it.`);
  return text;
}
