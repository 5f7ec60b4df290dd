/**
 * Tool-call argument JSON arrives in fragments keyed by `index`; a stream without a finish reason
 * was cut, and `finish()` throws so a partial tool call is never taken for a complete one.
 */
import { z } from 'zod';
import { ContentBody, UsageBody, argumentsText, extraContentText, fallbackToolCallId, splitContent, toFinishReason, toUsage } from './chatMapping.ts';
import type { RawCompletion } from './chatMapping.ts';
import type { StreamEvent, Usage } from '../core/provider.ts';
import { InferenceError } from './errors.ts';

const ChunkBody = z.object({
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        index: z.number().nullish(),
        delta: z
          .object({
            content: ContentBody.nullish(),
            refusal: z.string().nullish(),
            reasoning_content: z.string().nullish(),
            reasoning: z.string().nullish(),
            tool_calls: z
              .array(
                z.object({
                  index: z.number().int().nonnegative().nullish(),
                  id: z.string().nullish(),
                  function: z.object({ name: z.string().nullish(), arguments: z.unknown().optional() }).nullish(),
                  extra_content: z.unknown().optional(),
                }),
              )
              .nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: UsageBody.nullish(),
});

export type DeltaEvent = Exclude<StreamEvent, { type: 'done' }>;

interface PartialToolCall {
  id: string | undefined;
  name: string | undefined;
  extraContent: string | undefined;
  readonly fragments: string[];
}

export class StreamAssembler {
  readonly #requestedModel: string;
  readonly #text: string[] = [];
  readonly #refusal: string[] = [];
  readonly #reasoning: string[] = [];
  readonly #calls = new Map<number, PartialToolCall>();
  /** The server's index of each call to the number it got here. */
  readonly #slots = new Map<number, number>();
  #lastIndex = -1;
  #finishReason: string | undefined;
  #usage: Usage | undefined;
  #model: string | undefined;
  #chunks = 0;
  #emitted = 0;

  constructor(requestedModel: string) {
    this.#requestedModel = requestedModel;
  }

  /** A usage chunk may still follow. */
  get finished(): boolean {
    return this.#finishReason !== undefined;
  }

  get emitted(): number {
    return this.#emitted;
  }

  push(chunk: unknown): DeltaEvent[] {
    const parsed = ChunkBody.safeParse(chunk);
    if (!parsed.success) {
      throw InferenceError.invalidResponse(`stream chunk ${this.#chunks + 1} is not a chat-completion chunk (${parsed.error.issues[0]?.message ?? 'unexpected shape'})`);
    }
    this.#chunks++;
    const body = parsed.data;
    if (body.model) this.#model ??= body.model;
    // Groq repeats usage inside x_groq; the top-level one is the same counts.
    if (body.usage) this.#usage = toUsage(body.usage) ?? this.#usage;
    const events: DeltaEvent[] = [];
    for (const choice of body.choices ?? []) {
      // Only the first choice is assembled; `n > 1` is not something the loop asks for.
      if ((choice.index ?? 0) !== 0) continue;
      const delta = choice.delta;
      const content = splitContent(delta?.content);
      const thought = delta?.reasoning_content || delta?.reasoning || content.thinking;
      if (thought) {
        this.#reasoning.push(thought);
        events.push({ type: 'reasoning.delta', delta: thought });
      }
      if (content.text) {
        this.#text.push(content.text);
        events.push({ type: 'text.delta', delta: content.text });
      }
      if (delta?.refusal) this.#refusal.push(delta.refusal);
      for (const call of delta?.tool_calls ?? []) events.push(this.#toolCallDelta(call));
      if (choice.finish_reason) this.#finishReason = choice.finish_reason;
    }
    this.#emitted += events.length;
    return events;
  }

  #toolCallDelta(call: {
    index?: number | null;
    id?: string | null;
    function?: { name?: string | null; arguments?: unknown } | null;
    extra_content?: unknown;
  }): DeltaEvent {
    const index = this.#slotOf(call);
    this.#lastIndex = index;
    let partial = this.#calls.get(index);
    if (partial === undefined) {
      partial = { id: undefined, name: undefined, extraContent: undefined, fragments: [] };
      this.#calls.set(index, partial);
    }
    const event: { type: 'toolcall.delta'; index: number; id?: string; name?: string; argumentsDelta: string } = {
      type: 'toolcall.delta',
      index,
      argumentsDelta: argumentsText(call.function?.arguments),
    };
    // id and name belong to the first delta; servers that repeat them later must not duplicate them.
    if (call.id && partial.id === undefined) event.id = partial.id = call.id;
    if (call.function?.name && partial.name === undefined) event.name = partial.name = call.function.name;
    if (event.argumentsDelta !== '') partial.fragments.push(event.argumentsDelta);
    partial.extraContent ??= extraContentText(call.extra_content);
    return event;
  }

  /** Calls are numbered in the order they start; the server's index only says which open call a fragment continues. */
  #slotOf(call: { index?: number | null; id?: string | null; function?: { name?: string | null } | null }): number {
    // A missing index (seen from some local servers): a new id starts a new call, else it continues the last.
    if (call.index === undefined || call.index === null) return call.id && !this.#hasId(call.id) ? this.#calls.size : Math.max(0, this.#lastIndex);
    const slot = this.#slots.get(call.index);
    const open = slot === undefined ? undefined : this.#calls.get(slot);
    // Ollama sends every call of a turn at index 0: a different id with a name at a taken index is the next call.
    // Without a name it is more of the same call (Poolside changes a call's id after its first piece).
    const starts = Boolean(call.id && call.function?.name) && open?.id !== undefined && open.id !== call.id;
    if (slot !== undefined && !starts) return slot;
    this.#slots.set(call.index, this.#calls.size);
    return this.#calls.size;
  }

  #hasId(id: string): boolean {
    for (const partial of this.#calls.values()) if (partial.id === id) return true;
    return false;
  }

  /** `retryable` says whether any delta had been handed out. */
  finish(): RawCompletion {
    if (this.#finishReason === undefined) {
      const partialCalls = [...this.#calls.values()].map((call) => call.name ?? '?');
      throw InferenceError.streamInterrupted(
        `no finish reason after ${this.#chunks} chunk(s)` +
          (partialCalls.length > 0 ? `; incomplete tool call(s) ${partialCalls.join(', ')} dropped` : ''),
        { deltasYielded: this.#emitted > 0 },
      );
    }
    const toolCalls = [...this.#calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => ({
        id: call.id ?? fallbackToolCallId(index),
        name: call.name ?? '',
        arguments: call.fragments.join(''),
        ...(call.extraContent === undefined ? {} : { extraContent: call.extraContent }),
      }));
    const refusal = this.#refusal.join('');
    return {
      text: this.#text.join('') || null,
      refusal: refusal || null,
      reasoning: this.#reasoning.join('') || null,
      toolCalls,
      finishReason: toFinishReason(this.#finishReason),
      usage: this.#usage,
      model: this.#model ?? this.#requestedModel,
    };
  }
}
