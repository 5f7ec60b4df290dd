/**
 * A run as AG-UI events: the one mapping of journal entries to what a person reads (text,
 * tool calls with arguments and results, decisions, the end with usage), shared by the web
 * handler's AG-UI protocol and the inspector's live view. Phases are steps; streamed tokens are
 * text content; everything else the loop journals is a CUSTOM event named `actorloop.<type>`.
 */
import { EventType, type Event as AgUiEvent } from '@ag-ui/core';
import type { JournalEntry, LoopEventOf } from '../core/loopEvent.ts';
import type { Message } from '../core/messages.ts';

/**
 * Tool calls' arguments and results for entries that name them only by id (journals written
 * before events carried them); `undefined` for a call whose detail is not known here. Values
 * are redacted.
 */
export interface RunDetails {
  toolArguments(toolCallId: string): string | undefined;
  toolResult(toolCallId: string): string | undefined;
}

/** The run an encoder encodes. */
export interface RunView {
  readonly runId: string;
  readonly threadId: string;
  readonly details: RunDetails;
}

/** Details known for no call. */
export const NO_DETAILS: RunDetails = { toolArguments: () => undefined, toolResult: () => undefined };

/**
 * Arguments and results read from a run's conversation (read anew on each call), redacted on
 * the way out.
 *
 * @example
 * ```ts
 * detailsFromMessages(() => run.actor.getSnapshot().context.messages, createRedactor({}).text);
 * ```
 */
export function detailsFromMessages(messages: () => readonly Message[], redact: (text: string) => string): RunDetails {
  return {
    toolArguments(toolCallId) {
      for (const message of messages()) {
        if (message.role !== 'assistant') continue;
        const call = message.toolCalls?.find((c) => c.id === toolCallId);
        if (call !== undefined) return redact(call.arguments);
      }
      return undefined;
    },
    toolResult(toolCallId) {
      const message = messages().find((m) => m.role === 'tool' && m.toolCallId === toolCallId);
      return message === undefined ? undefined : redact(message.content as string);
    },
  };
}

/** Ends that are the run's answer; every other reason but `cancelled` is a RUN_ERROR. */
const ANSWERED = new Set(['final_answer']);

/**
 * One run's journal entries, fed in order from its first, as AG-UI events. It keeps state (an
 * open message, the calls awaiting results), but its output depends only on the entries and the
 * details it is given, so encoding a run again from its first entry gives the same events.
 *
 * @example
 * ```ts
 * const encoder = new AgUiEncoder({ runId, threadId: runId, details: detailsFromMessages(() => messages, redact) });
 * run.events$.subscribe((entry) => encoder.encode(entry).forEach(send));
 * ```
 */
export class AgUiEncoder {
  readonly #view: RunView;
  #step: string | undefined;
  #text: { readonly id: string; sent: string } | undefined;
  #answer: string | null = null;
  /** The run's cost so far; a provider that prices nothing reports 0, which is left out as unknown. */
  #costUsd: number | undefined;
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
        this.#results(out, event.results);
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
    if (event.costUsd !== undefined) this.#costUsd = (this.#costUsd ?? 0) + event.costUsd;
    for (const call of event.toolCalls) {
      out.push({ type: EventType.TOOL_CALL_START, toolCallId: call.id, toolCallName: call.name, ...(parentMessageId === undefined ? {} : { parentMessageId }) });
      // The journal's copy first: every server that reads the journal sends the same arguments.
      const args = call.arguments ?? this.#view.details.toolArguments(call.id);
      out.push(args === undefined || args === '' ? undefined : { type: EventType.TOOL_CALL_ARGS, toolCallId: call.id, delta: args });
      out.push({ type: EventType.TOOL_CALL_END, toolCallId: call.id });
      this.#open.add(call.id);
    }
  }

  /** The results of the turn's calls (run, refused or rejected alike: each has its observation by now). */
  #results(out: (AgUiEvent | undefined)[], journaled: LoopEventOf<'observations.collected'>['results']): void {
    for (const toolCallId of this.#open) {
      const content = journaled?.find((r) => r.toolCallId === toolCallId)?.content ?? this.#view.details.toolResult(toolCallId);
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
        result: { reason, iterations, usage, text: this.#answer, ...(this.#costUsd === undefined || this.#costUsd <= 0 ? {} : { costUsd: this.#costUsd }) },
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
