// A wait for a human ends the AG-UI run with the interrupt outcome; resume entries answering it continue
// the same loop run as a new AG-UI run.
import { EventType, type Event as AgUiEvent, type Message as AgUiMessage, type ResumeEntry } from '@ag-ui/core';
import { z } from 'zod';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { EventEncoder } from '@ag-ui/encoder';
import type { Agent } from '../agent/types.ts';
import { AgUiEncoder } from '../events/agUiEncoder.ts';
import type { Message } from '../core/messages.ts';
import { WebRequestError } from './errors.ts';
import { createRunHandler, oneLine, type WebHandler, type WebHandlerOptions } from './handler.ts';
import type { ResumeRequest, StartRequest, SubRun, WebProtocol } from './protocol.ts';

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
  merge: (previous, next) =>
    previous.type === EventType.TEXT_MESSAGE_CONTENT && next.type === EventType.TEXT_MESSAGE_CONTENT && previous.messageId === next.messageId
      ? { ...previous, delta: previous.delta + next.delta }
      : undefined,
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
      // A sub-run waiting for a human is suspended; only the served run's waits are answered from the page.
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
    default:
      return { ...event, subagentRunId };
  }
}

/** AG-UI's encoder only drops null optional fields: JSON without a null anywhere is the frame as it is. */
function frame(event: AgUiEvent): string {
  const json = JSON.stringify(event);
  return json.includes('null') ? sse.encodeSSE(event) : `data: ${json}\n\n`;
}

function parseStart(body: unknown): StartRequest | ResumeRequest {
  const parsed = RunAgentInputSchema.safeParse(body);
  if (!parsed.success) throw new WebRequestError(400, `The body is not an AG-UI RunAgentInput: ${oneLine(parsed.error)}.`);
  const input = parsed.data;
  if (input.resume !== undefined && input.resume.length > 0) return resumeOf(input.resume, input.runId);
  const messages = input.messages as AgUiMessage[];
  const last = messages.at(-1);
  const task = last?.role === 'user' ? textOf(last.content) : '';
  if (task.trim() === '') throw new WebRequestError(400, 'The last message must be a user message with text: it is the task of the run.');
  return { task, history: messages.slice(0, -1).flatMap(toMessage), runId: input.runId, threadId: input.threadId };
}

/** A held call's interrupt `responseSchema`. */
const Decision = z.strictObject({ approved: z.boolean(), reason: z.string().max(10_000).optional() });

/** Cancelled is a rejection; resolved carries a decision, or an elicitation's answer. */
function resumeOf(entries: readonly ResumeEntry[], resumedAs: string): ResumeRequest {
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
  return { resume: { runId, approved: [...approved, ...Object.keys(answers)], rejected, answers, resumedAs } };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.flatMap((part: { type?: unknown; text?: unknown }) => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : [])).join('\n');
}

/** Activity and reasoning messages are the page's own and are left out. */
function toMessage(message: AgUiMessage): Message[] {
  switch (message.role) {
    case 'system':
    case 'developer':
      return [{ role: 'system', content: message.content }];
    case 'user':
      return [{ role: 'user', content: textOf(message.content) }];
    case 'assistant': {
      const toolCalls = (message.toolCalls ?? []).map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments }));
      return [{ role: 'assistant', content: message.content ?? null, ...(toolCalls.length === 0 ? {} : { toolCalls }) }];
    }
    case 'tool':
      return [{ role: 'tool', toolCallId: message.toolCallId, content: textOf(message.content), ...(message.error === undefined ? {} : { isError: true }) }];
    default:
      return [];
  }
}
