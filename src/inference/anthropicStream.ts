/** A stream without a `stop_reason` was cut: `finish()` throws, so a partial tool call or unsigned thinking is never taken for complete. */
import { z } from 'zod';
import type { DeltaEvent } from './streamAssembler.ts';
import { AnthropicUsageBody, ContentCollector, rawOf, toAnthropicUsage } from './anthropicMapping.ts';
import type { AnthropicRaw } from './anthropicMapping.ts';
import { InferenceError } from './errors.ts';

const StreamEventBody = z.looseObject({
  type: z.string(),
  index: z.number().int().nonnegative().nullish(),
  message: z.looseObject({ model: z.string().nullish(), usage: AnthropicUsageBody.nullish() }).nullish(),
  content_block: z
    .looseObject({
      type: z.string(),
      id: z.string().nullish(),
      name: z.string().nullish(),
      text: z.string().nullish(),
      thinking: z.string().nullish(),
      signature: z.string().nullish(),
      data: z.string().nullish(),
      input: z.unknown().optional(),
    })
    .nullish(),
  delta: z
    .looseObject({
      type: z.string().nullish(),
      text: z.string().nullish(),
      thinking: z.string().nullish(),
      signature: z.string().nullish(),
      partial_json: z.string().nullish(),
      stop_reason: z.string().nullish(),
      stop_details: z.looseObject({ explanation: z.string().nullish() }).nullish(),
    })
    .nullish(),
  usage: AnthropicUsageBody.nullish(),
});

type Block =
  | { readonly kind: 'text'; readonly parts: string[] }
  | { readonly kind: 'thinking'; readonly parts: string[]; signature: string }
  | { readonly kind: 'redacted'; readonly data: string }
  | { readonly kind: 'tool'; readonly id: string; readonly name: string; readonly ordinal: number; readonly parts: string[] }
  | { readonly kind: 'other' };

export class AnthropicStreamAssembler {
  readonly #requestedModel: string;
  readonly #blocks = new Map<number, Block>();
  #tools = 0;
  #model: string | undefined;
  #usage: AnthropicUsageBody = {};
  #stopReason: string | undefined;
  #refusal: string | undefined;
  #events = 0;
  #emitted = 0;

  constructor(requestedModel: string) {
    this.#requestedModel = requestedModel;
  }

  get finished(): boolean {
    return this.#stopReason !== undefined;
  }

  get emitted(): number {
    return this.#emitted;
  }

  push(value: unknown): DeltaEvent[] {
    const parsed = StreamEventBody.safeParse(value);
    if (!parsed.success) {
      throw InferenceError.invalidResponse(`stream event ${this.#events + 1} is not a Messages API event (${parsed.error.issues[0]?.message ?? 'unexpected shape'})`);
    }
    this.#events++;
    const event = parsed.data;
    const events = this.#apply(event);
    this.#emitted += events.length;
    return events;
  }

  #apply(event: z.infer<typeof StreamEventBody>): DeltaEvent[] {
    switch (event.type) {
      case 'message_start':
        if (event.message?.model) this.#model = event.message.model;
        this.#mergeUsage(event.message?.usage);
        return [];
      case 'content_block_start':
        return this.#start(this.#indexOf(event), event.content_block);
      case 'content_block_delta':
        return this.#delta(this.#indexOf(event), event.delta);
      case 'message_delta':
        this.#mergeUsage(event.usage);
        if (event.delta?.stop_reason) this.#stopReason = event.delta.stop_reason;
        if (event.delta?.stop_details?.explanation) this.#refusal = event.delta.stop_details.explanation;
        return [];
      default:
        // ping, content_block_stop, message_stop: nothing to assemble.
        return [];
    }
  }

  #indexOf(event: { readonly index?: number | null }): number {
    if (event.index === undefined || event.index === null) throw InferenceError.invalidResponse(`stream event ${this.#events} has no block index`);
    return event.index;
  }

  #start(index: number, block: z.infer<typeof StreamEventBody>['content_block']): DeltaEvent[] {
    if (block === null || block === undefined) throw InferenceError.invalidResponse(`stream event ${this.#events} starts no content block`);
    switch (block.type) {
      case 'text':
        this.#blocks.set(index, { kind: 'text', parts: block.text ? [block.text] : [] });
        return block.text ? [{ type: 'text.delta', delta: block.text }] : [];
      case 'thinking':
        this.#blocks.set(index, { kind: 'thinking', parts: block.thinking ? [block.thinking] : [], signature: block.signature ?? '' });
        return block.thinking ? [{ type: 'reasoning.delta', delta: block.thinking }] : [];
      case 'redacted_thinking':
        this.#blocks.set(index, { kind: 'redacted', data: block.data ?? '' });
        return [];
      case 'tool_use': {
        if (!block.id || !block.name) throw InferenceError.invalidResponse(`stream event ${this.#events} starts a tool_use block without id or name`);
        const ordinal = this.#tools++;
        // Anthropic starts with `input: {}` and streams the input; some compatible servers send it whole here instead.
        const whole = startInput(block.input);
        this.#blocks.set(index, { kind: 'tool', id: block.id, name: block.name, ordinal, parts: whole === '' ? [] : [whole] });
        return [{ type: 'toolcall.delta', index: ordinal, id: block.id, name: block.name, argumentsDelta: whole }];
      }
      default:
        this.#blocks.set(index, { kind: 'other' });
        return [];
    }
  }

  #delta(index: number, delta: z.infer<typeof StreamEventBody>['delta']): DeltaEvent[] {
    const block = this.#blocks.get(index);
    if (block === undefined) throw InferenceError.invalidResponse(`stream event ${this.#events} continues block ${index}, which never started`);
    if (delta === null || delta === undefined) return [];
    if (delta.type === 'text_delta' && block.kind === 'text' && delta.text) {
      block.parts.push(delta.text);
      return [{ type: 'text.delta', delta: delta.text }];
    }
    if (delta.type === 'thinking_delta' && block.kind === 'thinking' && delta.thinking) {
      block.parts.push(delta.thinking);
      return [{ type: 'reasoning.delta', delta: delta.thinking }];
    }
    if (delta.type === 'signature_delta' && block.kind === 'thinking' && delta.signature) {
      block.signature += delta.signature;
      return [];
    }
    if (delta.type === 'input_json_delta' && block.kind === 'tool' && delta.partial_json) {
      block.parts.push(delta.partial_json);
      return [{ type: 'toolcall.delta', index: block.ordinal, argumentsDelta: delta.partial_json }];
    }
    return [];
  }

  #mergeUsage(usage: AnthropicUsageBody | null | undefined): void {
    if (usage === null || usage === undefined) return;
    // message_delta repeats the counts so far; a field it leaves out keeps message_start's value.
    const next: AnthropicUsageBody = { ...this.#usage };
    for (const [key, value] of Object.entries(usage) as [keyof AnthropicUsageBody, number | null | undefined][]) {
      if (typeof value === 'number') next[key] = value;
    }
    this.#usage = next;
  }

  /** `retryable` says whether any delta had been handed out. */
  finish(): AnthropicRaw {
    if (this.#stopReason === undefined) {
      const partialCalls = [...this.#blocks.values()].flatMap((block) => (block.kind === 'tool' ? [block.name] : []));
      throw InferenceError.streamInterrupted(
        `no stop reason after ${this.#events} event(s)` +
          (partialCalls.length > 0 ? `; incomplete tool call(s) ${partialCalls.join(', ')} dropped` : ''),
        { deltasYielded: this.#emitted > 0 },
      );
    }
    const collected = new ContentCollector();
    for (const [, block] of [...this.#blocks.entries()].sort(([a], [b]) => a - b)) {
      if (block.kind === 'text') collected.text.push(block.parts.join(''));
      else if (block.kind === 'thinking') {
        const text = block.parts.join('');
        collected.reasoning.push(block.signature === '' ? { type: 'thinking', text } : { type: 'thinking', text, signature: block.signature });
      } else if (block.kind === 'redacted') collected.reasoning.push({ type: 'redacted', data: block.data });
      // An argument-less tool streams no JSON at all: its input is the empty object.
      else if (block.kind === 'tool') collected.toolCalls.push({ id: block.id, name: block.name, arguments: block.parts.join('') || '{}' });
    }
    return rawOf(collected, this.#stopReason, this.#refusal, toAnthropicUsage(this.#usage), this.#model ?? this.#requestedModel);
  }
}

/** A start block's input as argument JSON; '' for the empty object Anthropic sends before streaming the input. */
function startInput(input: unknown): string {
  if (typeof input !== 'object' || input === null || Array.isArray(input) || Object.keys(input).length === 0) return '';
  return JSON.stringify(input);
}
