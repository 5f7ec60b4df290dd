/**
 * AG-UI over the run feed: a `RunAgentInput` starts a run (its last user message is the task,
 * the messages before it the history), and the run's journal becomes AG-UI events. Phases are
 * steps; streamed tokens are text content; tool calls carry their arguments and results; gate
 * decisions, waits for a human and everything else the loop journals are CUSTOM events named
 * `actorloop.<event type>`; the end is RUN_FINISHED (usage in its result) or RUN_ERROR.
 */
import { EventType, type Event as AgUiEvent, type Message as AgUiMessage } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { EventEncoder } from '@ag-ui/encoder';
import type { Agent } from '../agent/types.ts';
import { AgUiEncoder } from '../events/agUiEncoder.ts';
import type { Message } from '../core/messages.ts';
import { WebRequestError } from './errors.ts';
import { createRunHandler, oneLine, type WebHandler, type WebHandlerOptions } from './handler.ts';
import type { StartRequest, WebProtocol } from './protocol.ts';

/** The CUSTOM event a wait for a human becomes: answer it with `runs/:runId/approve` or `reject`. */
export const AG_UI_INTERRUPT = 'actorloop.human.awaiting';

/**
 * Serve `agent`'s runs to AG-UI clients (`@ag-ui/client`'s `HttpAgent`, CopilotKit): POST a
 * `RunAgentInput` to stream a run; see `createRunHandler` for the other routes.
 *
 * @example
 * ```ts
 * // app/api/agent/[[...path]]/route.ts (Next.js)
 * const handler = createAgUiHandler(agent);
 * export { handler as GET, handler as POST };
 * ```
 */
export function createAgUiHandler(agent: Agent, options: WebHandlerOptions = {}): WebHandler {
  return createRunHandler(agent, agUiProtocol, options);
}

const sse = new EventEncoder();

/** AG-UI as a protocol of the run handler. */
export const agUiProtocol: WebProtocol<AgUiEvent> = {
  parseStart,
  encoder: (view) => new AgUiEncoder(view),
  frame: (event) => sse.encodeSSE(event),
  merge: (previous, next) =>
    previous.type === EventType.TEXT_MESSAGE_CONTENT && next.type === EventType.TEXT_MESSAGE_CONTENT && previous.messageId === next.messageId
      ? { ...previous, delta: previous.delta + next.delta }
      : undefined,
};

function parseStart(body: unknown): StartRequest {
  const parsed = RunAgentInputSchema.safeParse(body);
  if (!parsed.success) throw new WebRequestError(400, `The body is not an AG-UI RunAgentInput: ${oneLine(parsed.error)}.`);
  const input = parsed.data;
  const messages = input.messages as AgUiMessage[];
  const last = messages.at(-1);
  const task = last?.role === 'user' ? textOf(last.content) : '';
  if (task.trim() === '') throw new WebRequestError(400, 'The last message must be a user message with text: it is the task of the run.');
  return { task, history: messages.slice(0, -1).flatMap(toMessage), runId: input.runId, threadId: input.threadId };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.flatMap((part: { type?: unknown; text?: unknown }) => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : [])).join('\n');
}

/** One AG-UI message as the loop's; activity and reasoning messages are the page's own and are left out. */
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
