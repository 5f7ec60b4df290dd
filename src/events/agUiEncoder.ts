/** The one mapping of journal entries to AG-UI, shared by the web handler and the live view; what AG-UI has no type for is a CUSTOM `actorloop.<type>` event. */
import { EventType, type Event as AgUiEvent, type Interrupt } from '@ag-ui/core';
import type { JournalEntry, LoopEventOf } from '../core/loopEvent.ts';
import type { Message } from '../core/messages.ts';
import { keepPlaces, SentText, type LiveMark } from './sentText.ts';

/** For entries that name calls only by id (older journals); values are redacted. */
export interface RunDetails {
  toolArguments(toolCallId: string): string | undefined;
  toolResult(toolCallId: string): string | undefined;
}

export interface RunView {
  readonly runId: string;
  readonly threadId: string;
  readonly details: RunDetails;
  /** The page's id for the run that continues after a wait for a human (an AG-UI resume's `runId`). */
  readonly resumedAs?: string;
}

export interface AgUiEncoderOptions {
  /** End the AG-UI run at each wait for a human with an interrupt, as AG-UI clients expect; off, a wait is only its CUSTOM event. */
  readonly interrupts?: boolean;
}

/** What an interrupt for a held tool call expects as its resume payload. */
export const APPROVAL_SCHEMA = {
  type: 'object',
  properties: { approved: { type: 'boolean' }, reason: { type: 'string' } },
  required: ['approved'],
  additionalProperties: false,
} as const;

/** The interrupt id a held call or a question gets: unique within the run, and naming the run it resumes. */
export const interruptId = (runId: string, key: string): string => `${runId}/${key}`;

/** What a wait that asks a question (it holds no call) is answered under: its entry's sequence. */
export const questionKey = (sequence: number): string => `question:${sequence}`;

export const NO_DETAILS: RunDetails = { toolArguments: () => undefined, toolResult: () => undefined };

/** Read anew on each call, redacted on the way out. */
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

/** Output depends only on the entries and details given, so encoding a run again from its first entry gives the same events. */
export class AgUiEncoder {
  readonly #view: RunView;
  readonly #interrupts: boolean;
  /** The AG-UI run the events belong to: the run's id, then its continuation's after a wait. */
  #runId: string;
  #interrupted = false;
  #step: string | undefined;
  #text: SentText | undefined;
  /** Characters a reconnecting page has of the live message it had open (`resume`), until a message opens. */
  #resumed: number | undefined;
  /** The start `resume` left out of the message it went on with, until taken (`resumedStarts`). */
  #resumedStart: AgUiEvent | undefined;
  /** The last event given was a delta of `#text`: a token that follows continues it. */
  #deltaLast = false;
  /** The marks of the last `encode`'s events before its last, where a live message opened (`markAt`). */
  #marks: (LiveMark | undefined)[] = [];
  #answer: string | null = null;
  /** The run's cost so far; a provider that prices nothing reports 0, which is left out as unknown. */
  #costUsd: number | undefined;
  readonly #open = new Set<string>();

  constructor(view: RunView, options: AgUiEncoderOptions = {}) {
    this.#view = view;
    this.#interrupts = options.interrupts === true;
    this.#runId = view.runId;
  }

  encode(entry: JournalEntry): (AgUiEvent | undefined)[] {
    const { event } = entry;
    // Most entries are deltas of the message being streamed: one event, in an array of its size.
    if (event.type === 'token.delta' && this.#text !== undefined && !this.#interrupted && event.delta !== '') {
      const delta = this.#text.add(event.delta);
      if (delta === '') return [];
      this.#deltaLast = true;
      return [{ type: EventType.TEXT_MESSAGE_CONTENT, messageId: this.#text.id, delta }];
    }
    const out: (AgUiEvent | undefined)[] = [];
    if (this.#marks.length > 0) this.#marks = [];
    if (this.#interrupted) {
      this.#interrupted = false;
      this.#runId = this.#view.resumedAs ?? this.#view.runId;
      out.push({ type: EventType.RUN_STARTED, threadId: this.#view.threadId, runId: this.#runId });
    }
    switch (event.type) {
      case 'run.started':
        out.push({ type: EventType.RUN_STARTED, threadId: this.#view.threadId, runId: this.#view.runId });
        break;
      case 'human.awaiting':
        out.push(custom(event));
        if (this.#interrupts) this.#interrupt(out, entry.sequence, event);
        break;
      case 'phase.entered':
        this.#closeStep(out);
        this.#step = event.phase;
        out.push({ type: EventType.STEP_STARTED, stepName: event.phase });
        break;
      case 'token.delta':
        if (event.delta !== '') this.#sendText(out, this.#messageId(entry.sequence, event.live?.call), event.delta, event.live !== undefined);
        break;
      case 'reasoning.completed':
        this.#completed(out, this.#messageId(entry.sequence, event.call), event);
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
    if (out.length > 0) this.#deltaLast = out[out.length - 1]?.type === EventType.TEXT_MESSAGE_CONTENT;
    return out;
  }

  /** A token of the message the last event sent continues: its text (see `StreamEncoder.continueText`). */
  continueText(entry: JournalEntry): string | undefined {
    const { event } = entry;
    if (!this.#deltaLast || event.type !== 'token.delta' || this.#text === undefined || this.#interrupted || event.delta === '') return undefined;
    return this.#text.add(event.delta);
  }

  /** How much of the message a worker streams live (in no journal) the events so far gave; `undefined` when none is open. */
  mark(): LiveMark | undefined {
    return this.#text?.live === true ? { text: this.#text.had } : undefined;
  }

  markAt(index: number): LiveMark | undefined {
    return this.#marks[index];
  }

  /** The next message opened is the one a reconnecting page had `mark` of: it goes on from there, without a start. */
  resume(mark: LiveMark): void {
    this.#resumed = mark.text;
  }

  resumedStarts(): AgUiEvent[] {
    const start = this.#resumedStart;
    if (start === undefined) return [];
    this.#resumedStart = undefined;
    return [start];
  }

  failure(message: string, code: string): AgUiEvent {
    return { type: EventType.RUN_ERROR, message, code };
  }

  /** True for the wait that ended an AG-UI run (with `interrupts`): the page answers it in a new run. */
  endsResponse(entry: JournalEntry): boolean {
    return this.#interrupts && entry.event.type === 'human.awaiting';
  }

  #interrupt(out: (AgUiEvent | undefined)[], sequence: number, event: LoopEventOf<'human.awaiting'>): void {
    this.#closeText(out);
    this.#closeStep(out);
    const { question } = event;
    const interrupts: Interrupt[] =
      question !== undefined
        ? [{ id: interruptId(this.#view.runId, questionKey(sequence)), reason: 'elicitation', message: question.message, responseSchema: question.schema, metadata: { server: question.server } }]
        : event.toolCallIds.map((toolCallId) => {
            const reason = event.reasons?.find((r) => r.toolCallId === toolCallId)?.reason;
            return { id: interruptId(this.#view.runId, toolCallId), reason: event.kind, ...(reason === undefined ? {} : { message: reason }), toolCallId, responseSchema: { ...APPROVAL_SCHEMA } };
          });
    out.push({ type: EventType.RUN_FINISHED, threadId: this.#view.threadId, runId: this.#runId, outcome: { type: 'interrupt', interrupts } });
    this.#interrupted = true;
  }

  /**
   * Named by the model call it streams where the run names its calls (a live delta's, or its reply's in a durable run),
   * else by the entry that opened it: the same id on every encoding of the run, however much of the call streamed live.
   */
  #messageId(sequence: number, call: string | undefined): string {
    return call ?? `${this.#view.runId}:${sequence}`;
  }

  #sendText(out: (AgUiEvent | undefined)[], messageId: string, delta: string, live = false): void {
    if (this.#text === undefined) {
      this.#text = new SentText(messageId, live, this.#resumed);
      const start: AgUiEvent = { type: EventType.TEXT_MESSAGE_START, messageId: this.#text.id, role: 'assistant' };
      if (this.#resumed !== undefined) this.#resumedStart = start;
      else {
        out.push(start);
        if (live) this.#marks[out.length - 1] = { text: 0 };
      }
      this.#resumed = undefined;
    }
    const rest = this.#text.add(delta);
    if (rest !== '') out.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: this.#text.id, delta: rest });
  }

  #closeText(out: (AgUiEvent | undefined)[]): void {
    if (this.#text === undefined) return;
    out.push({ type: EventType.TEXT_MESSAGE_END, messageId: this.#text.id });
    this.#text = undefined;
  }

  #completed(out: (AgUiEvent | undefined)[], messageId: string, event: LoopEventOf<'reasoning.completed'>): void {
    const from = out.length;
    const text = event.text ?? '';
    // A reply that was not streamed (or only partly) is sent whole here; a streamed one is complete already.
    const rest = this.#text === undefined ? text : this.#text.rest(text);
    // A page that had part of this call's message gets its end, even with no more text.
    if (rest !== '' || (this.#text === undefined && this.#resumed !== undefined)) this.#sendText(out, messageId, rest);
    const parentMessageId = this.#text?.id;
    this.#closeText(out);
    // Alone: a start, the text and an end.
    if (event.call !== undefined) keepPlaces(out, from, text === '' ? 0 : 3);
    if (event.text !== null) this.#answer = event.text;
    if (event.costUsd !== undefined) this.#costUsd = (this.#costUsd ?? 0) + event.costUsd;
    for (const call of event.toolCalls) {
      out.push({ type: EventType.TOOL_CALL_START, toolCallId: call.id, toolCallName: call.name, ...(parentMessageId === undefined ? {} : { parentMessageId }) });
      // The journal's copy first: every server that reads the journal sends the same arguments.
      const args = call.arguments ?? this.#view.details.toolArguments(call.id);
      out.push(args === undefined || args === '' ? undefined : { type: EventType.TOOL_CALL_ARGS, toolCallId: call.id, delta: args });
      // The provider's signature (Gemini's): the client keeps it on the call as `encryptedValue`, and the next request brings it back.
      if (call.extraContent !== undefined) out.push({ type: EventType.REASONING_ENCRYPTED_VALUE, subtype: 'tool-call', entityId: call.id, encryptedValue: call.extraContent });
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
        runId: this.#runId,
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

function custom(event: JournalEntry['event']): AgUiEvent {
  return { type: EventType.CUSTOM, name: `actorloop.${event.type}`, value: event };
}
