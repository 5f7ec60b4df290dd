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
import type { JournalEntry, LoopEventOf } from '../core/loopEvent.ts';
import type { Message } from '../core/messages.ts';
import { WebRequestError } from './errors.ts';
import { createRunHandler, oneLine, type WebHandler, type WebHandlerOptions } from './handler.ts';
import type { RunView, StartRequest, StreamEncoder, WebProtocol } from './protocol.ts';

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

/** Ends that are the run's answer; every other reason but `cancelled` is a RUN_ERROR. */
const ANSWERED = new Set(['final_answer']);

class AgUiEncoder implements StreamEncoder<AgUiEvent> {
  readonly #view: RunView;
  #step: string | undefined;
  #text: { readonly id: string; sent: string } | undefined;
  #answer: string | null = null;
  /** Calls announced and not yet given their result. */
  readonly #open = new Set<string>();

  constructor(view: RunView) {
    this.#view = view;
  }

  encode(entry: JournalEntry): (AgUiEvent | undefined)[] {
    const out: (AgUiEvent | undefined)[] = [];
    const { event } = entry;
    switch (event.type) {
      case 'run.started':
        out.push({ type: EventType.RUN_STARTED, threadId: this.#view.threadId, runId: this.#view.runId });
        break;
      case 'phase.entered':
        this.#closeStep(out);
        this.#step = event.phase;
        out.push({ type: EventType.STEP_STARTED, stepName: event.phase });
        break;
      case 'token.delta':
        if (event.delta !== '') this.#sendText(out, entry.sequence, event.delta);
        break;
      case 'reasoning.completed':
        this.#completed(out, entry.sequence, event);
        break;
      case 'observations.collected':
        this.#results(out);
        out.push(custom(event));
        break;
      case 'run.terminated':
        this.#closeText(out);
        this.#closeStep(out);
        out.push(this.#end(event));
        break;
      default:
        out.push(custom(event));
    }
    return out;
  }

  failure(message: string, code: string): AgUiEvent {
    return { type: EventType.RUN_ERROR, message, code };
  }

  #sendText(out: (AgUiEvent | undefined)[], sequence: number, delta: string): void {
    if (this.#text === undefined) {
      // Named by the entry that opened it: the same id on every encoding of the run.
      this.#text = { id: `${this.#view.runId}:${sequence}`, sent: '' };
      out.push({ type: EventType.TEXT_MESSAGE_START, messageId: this.#text.id, role: 'assistant' });
    }
    this.#text.sent += delta;
    out.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: this.#text.id, delta });
  }

  #closeText(out: (AgUiEvent | undefined)[]): void {
    if (this.#text === undefined) return;
    out.push({ type: EventType.TEXT_MESSAGE_END, messageId: this.#text.id });
    this.#text = undefined;
  }

  #completed(out: (AgUiEvent | undefined)[], sequence: number, event: LoopEventOf<'reasoning.completed'>): void {
    const text = event.text ?? '';
    const sent = this.#text?.sent ?? '';
    // A reply that was not streamed (or only partly) is sent whole here; a streamed one is complete already.
    if (text.length > sent.length && text.startsWith(sent)) this.#sendText(out, sequence, text.slice(sent.length));
    const parentMessageId = this.#text?.id;
    this.#closeText(out);
    if (event.text !== null) this.#answer = event.text;
    for (const call of event.toolCalls) {
      out.push({ type: EventType.TOOL_CALL_START, toolCallId: call.id, toolCallName: call.name, ...(parentMessageId === undefined ? {} : { parentMessageId }) });
      const args = this.#view.details.toolArguments(call.id);
      out.push(args === undefined || args === '' ? undefined : { type: EventType.TOOL_CALL_ARGS, toolCallId: call.id, delta: args });
      out.push({ type: EventType.TOOL_CALL_END, toolCallId: call.id });
      this.#open.add(call.id);
    }
  }

  /** The results of the turn's calls (run, refused or rejected alike: each has its observation by now). */
  #results(out: (AgUiEvent | undefined)[]): void {
    for (const toolCallId of this.#open) {
      const content = this.#view.details.toolResult(toolCallId);
      out.push(content === undefined ? undefined : { type: EventType.TOOL_CALL_RESULT, messageId: `${toolCallId}:result`, toolCallId, content, role: 'tool' });
    }
    this.#open.clear();
  }

  #closeStep(out: (AgUiEvent | undefined)[]): void {
    if (this.#step === undefined) return;
    out.push({ type: EventType.STEP_FINISHED, stepName: this.#step });
    this.#step = undefined;
  }

  #end(event: LoopEventOf<'run.terminated'>): AgUiEvent {
    const { usage, reason, iterations } = event;
    const tokens = [{ inputTokens: usage.promptTokens, outputTokens: usage.completionTokens, totalTokens: usage.totalTokens }];
    if (reason === 'cancelled' || ANSWERED.has(reason)) {
      return {
        type: EventType.RUN_FINISHED,
        threadId: this.#view.threadId,
        runId: this.#view.runId,
        result: { reason, iterations, usage, text: this.#answer },
        outcome: { type: reason === 'cancelled' ? 'cancelled' : 'success' },
        usage: tokens,
      };
    }
    return {
      type: EventType.RUN_ERROR,
      message: event.error?.message ?? `The run ended without an answer (${reason}).`,
      code: event.error?.code ?? reason,
      usage: tokens,
    };
  }
}

/** An event the protocol has no own type for, as `actorloop.<type>` with the event as its value. */
function custom(event: JournalEntry['event']): AgUiEvent {
  return { type: EventType.CUSTOM, name: `actorloop.${event.type}`, value: event };
}
