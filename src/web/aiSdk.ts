// A wait for a human is a tool approval request that ends the response; the page answers it in its next
// request (`addToolApprovalResponse`), which decides the calls and streams the run on.
import type { Agent } from '../agent/types.ts';
import type { JournalEntry, LoopEventOf } from '../core/loopEvent.ts';
import { createRunHandler, type WebHandler, type WebHandlerOptions } from './handler.ts';
import type { RunView, StreamEncoder, SubRun, TreeWaits, WebProtocol } from './protocol.ts';
import { parseStart } from './aiSdkRequest.ts';
import { keepPlaces, SentText, type LiveMark } from '../events/sentText.ts';

/**
 * For `useChat`'s default transport.
 * @example
 * ```ts
 * const handler = createAiSdkHandler(agent); // a Next.js route: export { handler as GET, handler as POST }
 * ```
 */
export function createAiSdkHandler(agent: Agent, options: WebHandlerOptions = {}): WebHandler {
  return createRunHandler(agent, aiSdkProtocol, options);
}

export const aiSdkProtocol: WebProtocol<AiSdkChunk> = {
  parseStart,
  encoder: (view) => new AiSdkEncoder(view),
  frame: (chunk) => `data: ${JSON.stringify(chunk)}\n\n`,
  deltas: { joins: continues, text: deltaText, join: joinDeltas },
  headers: { 'x-vercel-ai-ui-message-stream': 'v1' },
  attribute: attributeAiSdk,
  treeWaits: aiSdkTreeWaits,
};

/**
 * A sub-run's approval request ends the response as the served run's own does: the page answers it in its next
 * request. Another run's text or reasoning still streaming then is ended there (the page's reader keeps no part
 * open across responses) and started again, under its id, before its next delta; it reads as two parts.
 */
function aiSdkTreeWaits(_view: RunView, fromStop: boolean): TreeWaits<AiSdkChunk> {
  /** Text and reasoning parts started and not ended, by id, with the chunk that started them. */
  const open = new Map<string, AiSdkChunk>();
  /** Open parts the page saw ended at the wait that ended its last response. */
  const shut = new Set<string>();
  return {
    pass(chunk, sent) {
      if (chunk.type === 'text-start' || chunk.type === 'reasoning-start') {
        open.set(chunk.id, chunk);
        if (!sent && fromStop) shut.add(chunk.id);
        return [chunk];
      }
      if (chunk.type !== 'text-delta' && chunk.type !== 'reasoning-delta' && chunk.type !== 'text-end' && chunk.type !== 'reasoning-end') return [chunk];
      const ends = chunk.type === 'text-end' || chunk.type === 'reasoning-end';
      const starter = open.get(chunk.id);
      if (ends) open.delete(chunk.id);
      // A reading that goes on from a stop keeps shut what the page had before it; any other reads it as it was sent.
      if ((!sent && fromStop) || !shut.delete(chunk.id)) {
        if (ends && !sent) shut.delete(chunk.id);
        return [chunk];
      }
      // The page ended this part at the wait: an end is had already, a delta starts it again.
      return ends || starter === undefined ? [] : [starter, chunk];
    },
    closed(opener) {
      if (opener.type !== 'text-start' && opener.type !== 'reasoning-start') return;
      open.set(opener.id, opener);
      shut.add(opener.id);
    },
    owner: (chunk) => ('providerMetadata' in chunk && chunk.providerMetadata !== undefined && 'agentId' in chunk.providerMetadata.actorloop ? chunk.providerMetadata.actorloop.runId : ''),
    suspend(own) {
      if (!own.some((chunk) => chunk?.type === 'tool-approval-request')) return undefined;
      const ending = [...open].filter(([id]) => !shut.has(id));
      for (const [id] of ending) shut.add(id);
      const ends = ending.map(([id, starter]): AiSdkChunk => (starter.type === 'reasoning-start' ? { type: 'reasoning-end', id } : { type: 'text-end', id }));
      return [...ends, { type: 'finish', finishReason: 'tool-calls' }];
    },
  };
}

/**
 * Ids are prefixed, as two runs may number alike; a sub-run's steps are the message's too, so the calls it waits
 * on are the last step's (what `lastAssistantMessageIsCompleteWithApprovalResponses` reads).
 */
function attributeAiSdk(chunk: AiSdkChunk, run: SubRun): AiSdkChunk | undefined {
  const by: AiSdkAgentRef = { agentId: run.agentId, runId: run.runId };
  const own = (id: string): string => `${run.runId}/${id}`;
  const agent = (status: AiSdkAgentPart['status'], more: Partial<AiSdkAgentPart> = {}): AiSdkChunk => {
    const part: AiSdkAgentPart = { ...by, parentRunId: run.parentRunId, status, ...more };
    return { type: 'data-actorloop.agent', id: run.runId, data: part };
  };
  switch (chunk.type) {
    case 'start':
      return agent('running');
    case 'finish':
      return chunk.finishReason === 'tool-calls' ? agent('waiting') : agent('finished', chunk.messageMetadata === undefined ? {} : { usage: chunk.messageMetadata.usage });
    case 'error':
      return agent('failed', { error: chunk.errorText });
    case 'abort':
      return agent('cancelled');
    case 'message-metadata':
    case 'finish-step':
      return undefined;
    case 'start-step':
      return chunk;
    case 'tool-approval-request':
      return { ...chunk, approvalId: own(chunk.approvalId), toolCallId: own(chunk.toolCallId) };
    case 'text-start':
    case 'text-delta':
    case 'text-end':
    case 'reasoning-start':
    case 'reasoning-delta':
    case 'reasoning-end':
      return { ...chunk, id: own(chunk.id), providerMetadata: { actorloop: by } };
    case 'tool-input-delta':
    case 'tool-output-denied':
      return { ...chunk, toolCallId: own(chunk.toolCallId) };
    case 'tool-input-start':
    case 'tool-input-available':
    case 'tool-output-available':
    case 'tool-output-error':
      return { ...chunk, toolCallId: own(chunk.toolCallId), toolMetadata: by };
    default:
      // A data part: the phase part is the sub-run's own, every other is its event.
      return { ...chunk, ...(chunk.id === undefined ? {} : { id: own(chunk.id) }), data: { ...(chunk.data as object), agentId: run.agentId, runId: run.runId } };
  }
}

/** A subset of the AI SDK's chunks, written out so the package's declarations need no `ai` installed. */
export type AiSdkChunk =
  | { readonly type: 'start'; readonly messageId: string }
  | { readonly type: 'start-step' }
  | { readonly type: 'finish-step' }
  | ({ readonly type: 'text-start'; readonly id: string } & ByAgent)
  | ({ readonly type: 'text-delta'; readonly id: string; readonly delta: string } & ByAgent)
  | ({ readonly type: 'text-end'; readonly id: string } & ByAgent)
  | ({ readonly type: 'reasoning-start'; readonly id: string } & ByAgent)
  | ({ readonly type: 'reasoning-delta'; readonly id: string; readonly delta: string } & ByAgent)
  | ({ readonly type: 'reasoning-end'; readonly id: string } & ByAgent)
  | ({ readonly type: 'tool-input-start'; readonly toolCallId: string; readonly toolName: string } & ByAgentTool)
  | { readonly type: 'tool-input-delta'; readonly toolCallId: string; readonly inputTextDelta: string }
  | ({ readonly type: 'tool-input-available'; readonly toolCallId: string; readonly toolName: string; readonly input: unknown } & ByAgentTool)
  | ({ readonly type: 'tool-output-available'; readonly toolCallId: string; readonly output: unknown } & ByAgentTool)
  | ({ readonly type: 'tool-output-error'; readonly toolCallId: string; readonly errorText: string } & ByAgentTool)
  | { readonly type: 'tool-output-denied'; readonly toolCallId: string }
  | { readonly type: 'tool-approval-request'; readonly approvalId: string; readonly toolCallId: string; readonly reason?: string }
  | { readonly type: `data-${string}`; readonly data: unknown; readonly id?: string }
  | { readonly type: 'finish'; readonly finishReason?: 'stop' | 'tool-calls'; readonly messageMetadata?: AiSdkRunMetadata }
  | { readonly type: 'message-metadata'; readonly messageMetadata: AiSdkRunMetadata }
  | { readonly type: 'abort'; readonly reason?: string }
  | { readonly type: 'error'; readonly errorText: string };

export type AiSdkAgentRef = {
  readonly agentId: string;
  readonly runId: string;
};
interface ByAgent {
  readonly providerMetadata?: { readonly actorloop: AiSdkAgentRef };
}
interface ByAgentTool {
  readonly toolMetadata?: AiSdkAgentRef;
  /** The provider's signature on the call (`ToolCall.extraContent`), to come back with it. */
  readonly providerMetadata?: { readonly actorloop: { readonly extraContent: string } };
}

/** One per sub-run, its id the run id, updated in place. */
export interface AiSdkAgentPart extends AiSdkAgentRef {
  readonly parentRunId: string;
  readonly status: 'running' | 'waiting' | 'finished' | 'failed' | 'cancelled';
  readonly error?: string;
  readonly usage?: LoopEventOf<'run.terminated'>['usage'];
}

export interface AiSdkRunMetadata {
  readonly runId: string;
  readonly reason: string;
  readonly iterations: number;
  readonly usage: LoopEventOf<'run.terminated'>['usage'];
}

type Out = (AiSdkChunk | undefined)[];

class AiSdkEncoder implements StreamEncoder<AiSdkChunk> {
  readonly #view: RunView;
  #step = false;
  #text: SentText | undefined;
  #reasoning: SentText | undefined;
  /** The page ended `#reasoning` already (it had text after it): nothing more of it is sent. */
  #reasoningEnded = false;
  /** Characters of the live reasoning that ended before the live text of the same call began. */
  #reasoningHad = 0;
  /** What a reconnecting page has of the live parts it had open (`resume`), until they open. */
  #resumed: LiveMark | undefined;
  /** The starts `resume` left out of the parts it went on with, until taken (`resumedStarts`). */
  #resumedStarts: AiSdkChunk[] = [];
  /** The last chunk given was a delta of `#text`: a token that follows continues it. */
  #deltaLast = false;
  /** The marks of the last `encode`'s chunks before its last, where a live part opened or ended (`markAt`). */
  #marks: (LiveMark | undefined)[] = [];
  /** Calls announced, with the status their run ended in, until their output is sent. */
  readonly #open = new Map<string, string | undefined>();
  /** Calls a human rejected: their output is a denial. */
  readonly #rejected = new Set<string>();

  constructor(view: RunView) {
    this.#view = view;
  }

  endsResponse(entry: JournalEntry): boolean {
    return entry.event.type === 'human.awaiting';
  }

  encode(entry: JournalEntry): Out {
    const { event } = entry;
    // Most entries are deltas of the text being streamed.
    if (event.type === 'token.delta' && this.#text !== undefined && this.#reasoning === undefined && event.delta !== '') {
      const delta = this.#text.add(event.delta);
      if (delta === '') return [];
      this.#deltaLast = true;
      return [{ type: 'text-delta', id: this.#text.id, delta }];
    }
    const out: Out = [];
    if (this.#marks.length > 0) this.#marks = [];
    switch (event.type) {
      case 'run.started':
        out.push({ type: 'start', messageId: this.#view.runId });
        break;
      case 'phase.entered':
        // A step is one model turn: its reply, the gate, the calls and their results.
        if (event.phase === 'reason') {
          this.#closeStep(out);
          this.#step = true;
          out.push({ type: 'start-step' });
        }
        // One part, updated in place: the phase the run is in.
        out.push(data(event, 'phase'));
        break;
      case 'token.delta':
        if (event.delta !== '') this.#sendText(out, event.live?.call ?? entry.sequence, event.delta, event.live !== undefined);
        break;
      case 'thinking.delta':
        if (event.delta !== '') this.#sendReasoning(out, event.live?.call ?? entry.sequence, event.delta, event.live !== undefined);
        break;
      case 'reasoning.completed':
        this.#completed(out, event.call ?? entry.sequence, event);
        break;
      case 'tool.finished':
        if (this.#open.has(event.toolCallId)) this.#open.set(event.toolCallId, event.status);
        out.push(data(event));
        break;
      case 'human.decided':
        if (event.decision === 'reject') for (const id of event.toolCallIds) this.#rejected.add(id);
        out.push(data(event));
        break;
      case 'observations.collected':
        this.#results(out, event.results);
        out.push(data(event));
        break;
      case 'human.awaiting':
        out.push(data(event));
        for (const toolCallId of event.toolCallIds) {
          const reason = event.reasons?.find((r) => r.toolCallId === toolCallId)?.reason;
          out.push({ type: 'tool-approval-request', approvalId: toolCallId, toolCallId, ...(reason === undefined ? {} : { reason }) });
        }
        // The page answers in its next request; this response ends here.
        this.#closeStep(out);
        out.push({ type: 'finish', finishReason: 'tool-calls' });
        break;
      case 'run.terminated':
        this.#closeParts(out);
        this.#closeStep(out);
        out.push(...this.#end(event));
        break;
      default:
        out.push(data(event));
    }
    if (out.length > 0) this.#deltaLast = out[out.length - 1]?.type === 'text-delta';
    return out;
  }

  /** A token of the text part the last chunk sent continues: its text (see `StreamEncoder.continueText`). */
  continueText(entry: JournalEntry): string | undefined {
    const { event } = entry;
    if (!this.#deltaLast || event.type !== 'token.delta' || this.#text === undefined || this.#reasoning !== undefined || event.delta === '') return undefined;
    return this.#text.add(event.delta);
  }

  /** How much of the parts a worker streams live (in no journal) the chunks so far gave; `undefined` when none is open. */
  mark(): LiveMark | undefined {
    if (this.#text?.live === true) return this.#reasoningHad > 0 ? { reasoning: this.#reasoningHad, text: this.#text.had } : { text: this.#text.had };
    return this.#reasoning?.live === true ? { reasoning: this.#reasoning.had } : undefined;
  }

  markAt(index: number): LiveMark | undefined {
    return this.#marks[index];
  }

  /** The next reasoning and text parts opened are those a reconnecting page had `mark` of: they go on from there, without a start. */
  resume(mark: LiveMark): void {
    this.#resumed = mark;
  }

  resumedStarts(): AiSdkChunk[] {
    const starts = this.#resumedStarts;
    if (starts.length > 0) this.#resumedStarts = [];
    return starts;
  }

  failure(message: string, code: string): AiSdkChunk {
    return { type: 'error', errorText: `${message} (${code})` };
  }

  /**
   * `name`: the model call the part streams where the run names its calls (a live delta's, or its reply's in a durable
   * run), else the entry that opened it: the same id on every encoding of the run, however much of the call streamed live.
   */
  #sendText(out: Out, name: string | number, delta: string, live = false): void {
    this.#closeReasoning(out);
    if (this.#text === undefined) {
      const had = this.#resumed?.text;
      this.#resumed = undefined;
      this.#text = new SentText(`text:${name}`, live, had);
      if (had !== undefined) this.#resumedStarts.push({ type: 'text-start', id: this.#text.id });
      else {
        out.push({ type: 'text-start', id: this.#text.id });
        if (live) this.#marks[out.length - 1] = this.mark();
      }
    }
    const rest = this.#text.add(delta);
    if (rest !== '') out.push({ type: 'text-delta', id: this.#text.id, delta: rest });
  }

  #sendReasoning(out: Out, name: string | number, delta: string, live = false): void {
    if (this.#reasoning === undefined) {
      const had = this.#resumed?.reasoning;
      if (had !== undefined) this.#resumed = { ...this.#resumed, reasoning: undefined };
      // A page that had text of the call after this reasoning had the reasoning's end too.
      this.#reasoningEnded = had !== undefined && (this.#resumed?.text !== undefined || this.#resumed?.ended === true);
      this.#reasoning = new SentText(`reasoning:${name}`, live, had);
      // A reasoning the page had the end of is closed there already.
      if (had !== undefined && !this.#reasoningEnded) this.#resumedStarts.push({ type: 'reasoning-start', id: this.#reasoning.id });
      else if (had === undefined) {
        out.push({ type: 'reasoning-start', id: this.#reasoning.id });
        if (live) this.#marks[out.length - 1] = this.mark();
      }
    }
    const rest = this.#reasoning.add(delta);
    if (rest !== '' && !this.#reasoningEnded) out.push({ type: 'reasoning-delta', id: this.#reasoning.id, delta: rest });
  }

  #closeReasoning(out: Out): void {
    if (this.#reasoning === undefined) return;
    this.#reasoningHad = this.#reasoning.live ? this.#reasoning.had : 0;
    if (!this.#reasoningEnded) {
      out.push({ type: 'reasoning-end', id: this.#reasoning.id });
      if (this.#reasoning.live) this.#marks[out.length - 1] = { reasoning: this.#reasoningHad, ended: true };
    }
    this.#reasoning = undefined;
    this.#reasoningEnded = false;
  }

  #closeParts(out: Out): void {
    this.#closeReasoning(out);
    this.#reasoningHad = 0;
    if (this.#text === undefined) return;
    out.push({ type: 'text-end', id: this.#text.id });
    this.#text = undefined;
  }

  #completed(out: Out, name: string | number, event: LoopEventOf<'reasoning.completed'>): void {
    // Thinking or a reply that was not streamed (or only partly) is sent whole here.
    const from = out.length;
    const thought = event.reasoning ?? '';
    const thinking = this.#reasoning === undefined ? thought : this.#reasoning.rest(thought);
    // A page that had part of this call's parts gets their ends, even with no more text.
    if (this.#text === undefined && (thinking !== '' || (this.#reasoning === undefined && this.#resumed?.reasoning !== undefined))) this.#sendReasoning(out, name, thinking);
    const text = event.text ?? '';
    const rest = this.#text === undefined ? text : this.#text.rest(text);
    if (rest !== '' || (this.#text === undefined && this.#resumed?.text !== undefined)) this.#sendText(out, name, rest);
    this.#resumed = undefined;
    this.#closeParts(out);
    // Alone: a start, a delta and an end for the reasoning and for the text.
    if (event.call !== undefined) keepPlaces(out, from, (thought === '' ? 0 : 3) + (text === '' ? 0 : 3));
    for (const call of event.toolCalls) {
      // The provider's signature (Gemini's) rides on the call: the part keeps it as `callProviderMetadata`, which the next request brings back.
      const signed = call.extraContent === undefined ? {} : { providerMetadata: { actorloop: { extraContent: call.extraContent } } };
      out.push({ type: 'tool-input-start', toolCallId: call.id, toolName: call.name, ...signed });
      // The journal's copy first: every server that reads the journal sends the same input.
      const args = call.arguments ?? this.#view.details.toolArguments(call.id);
      const input = args === undefined ? undefined : parseInput(args);
      out.push(args === undefined || args === '' ? undefined : { type: 'tool-input-delta', toolCallId: call.id, inputTextDelta: args });
      out.push(input === undefined ? undefined : { type: 'tool-input-available', toolCallId: call.id, toolName: call.name, input: input.value, ...signed });
      this.#open.set(call.id, undefined);
    }
  }

  #results(out: Out, journaled: LoopEventOf<'observations.collected'>['results']): void {
    for (const [toolCallId, status] of this.#open) {
      if (this.#rejected.has(toolCallId)) {
        out.push({ type: 'tool-output-denied', toolCallId });
        continue;
      }
      const content = journaled?.find((r) => r.toolCallId === toolCallId)?.content ?? this.#view.details.toolResult(toolCallId);
      if (content === undefined) out.push(undefined);
      else if (status === undefined || status === 'ok') out.push({ type: 'tool-output-available', toolCallId, output: content });
      else out.push({ type: 'tool-output-error', toolCallId, errorText: content });
    }
    this.#open.clear();
  }

  #closeStep(out: Out): void {
    if (!this.#step) return;
    out.push({ type: 'finish-step' });
    this.#step = false;
  }

  #end(event: LoopEventOf<'run.terminated'>): AiSdkChunk[] {
    const { usage, reason, iterations } = event;
    const messageMetadata: AiSdkRunMetadata = { runId: this.#view.runId, reason, iterations, usage };
    // Only an answer finishes; a cancelled run aborts, every other end is an error.
    if (reason === 'final_answer') return [{ type: 'finish', finishReason: 'stop', messageMetadata }];
    if (reason === 'cancelled') return [{ type: 'message-metadata', messageMetadata }, { type: 'abort', reason: 'cancelled' }];
    const errorText = `${event.error?.message ?? `The run ended without an answer (${reason}).`} (${event.error?.code ?? reason})`;
    return [{ type: 'message-metadata', messageMetadata }, { type: 'error', errorText }];
  }
}

function continues(first: AiSdkChunk, next: AiSdkChunk): boolean {
  return (first.type === 'text-delta' || first.type === 'reasoning-delta') && next.type === first.type && next.id === first.id;
}

function deltaText(chunk: AiSdkChunk): string {
  return chunk.type === 'text-delta' || chunk.type === 'reasoning-delta' ? chunk.delta : '';
}

function joinDeltas(first: AiSdkChunk, delta: string): AiSdkChunk {
  return first.type === 'text-delta' || first.type === 'reasoning-delta' ? { ...first, delta } : first;
}

function parseInput(args: string): { value: unknown } {
  if (args.trim() === '') return { value: {} };
  try {
    return { value: JSON.parse(args) as unknown };
  } catch {
    return { value: args };
  }
}

function data(event: JournalEntry['event'], id?: string): AiSdkChunk {
  return { type: `data-actorloop.${event.type}`, data: event, ...(id === undefined ? {} : { id }) };
}
