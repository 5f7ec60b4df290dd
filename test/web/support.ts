/**
 * A web handler on a real Node HTTP server on 127.0.0.1, and a plain SSE reader for the tests
 * that need to cut a stream where they choose.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { z } from 'zod';
import { EventSchemas } from '@ag-ui/core/schemas';
import { AbstractAgent, defaultApplyEvents } from '@ag-ui/client';
import type { BaseEvent, Message as AgUiMessage, RunAgentInput } from '@ag-ui/core';
import { from, lastValueFrom, toArray, type Observable } from 'rxjs';
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema, type UIMessage, type UIMessageChunk } from 'ai';
import { defineTool } from '../../src/tools/defineTool.ts';
import { toNodeListener } from '../../src/web/node.ts';
import type { InferenceProvider } from '../../src/core/provider.ts';
import type { WebHandler } from '../../src/web/handler.ts';

export interface Served {
  readonly url: string;
  close(): Promise<void>;
}

export async function serve(handler: WebHandler): Promise<Served> {
  const server: Server = createServer(toNodeListener(handler));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/agent`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const add = (requiresConfirmation = false) =>
  defineTool({
    name: 'add',
    description: 'Add two numbers',
    input: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => a + b,
    requiresConfirmation,
  });

/** One server-sent event as the wire carried it. */
export interface SseEvent {
  readonly id: string | undefined;
  readonly data: Record<string, unknown> & { type: string };
}

/** Parse SSE text into events, each data validated against AG-UI's event schemas. */
export function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      let id: string | undefined;
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      return { id, data: EventSchemas.parse(JSON.parse(data)) as SseEvent['data'] };
    });
}

/** Reads a stream's events as they arrive: wait for one, or read to the end, or drop the connection. */
export class EventReader {
  readonly events: SseEvent[] = [];
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #text = '';
  #done = false;

  constructor(response: Response) {
    this.#reader = (response.body as ReadableStream<Uint8Array>).getReader();
  }

  /** Read until `count` events in all have arrived (fewer if the stream ends first). */
  async take(count: number): Promise<SseEvent[]> {
    while (this.events.length < count && !this.#done) await this.#pull();
    return this.events.slice(0, count);
  }

  /** Read until an event matches (rejects if the stream ends first). */
  async until(match: (event: SseEvent) => boolean): Promise<SseEvent> {
    for (;;) {
      const found = this.events.find(match);
      if (found !== undefined) return found;
      if (this.#done) throw new Error(`the stream ended without the awaited event; got ${this.events.map((e) => e.data.type).join(' ')}`);
      await this.#pull();
    }
  }

  /** Read while `pending()` holds (rejects if the stream ends first). */
  async whilst(pending: () => boolean): Promise<void> {
    while (pending()) {
      if (this.#done) throw new Error(`the stream ended before the awaited state; got ${this.events.map((e) => e.data.type).join(' ')}`);
      await this.#pull();
    }
  }

  async rest(): Promise<SseEvent[]> {
    while (!this.#done) await this.#pull();
    return this.events;
  }

  async drop(): Promise<void> {
    await this.#reader.cancel();
  }

  async #pull(): Promise<void> {
    const { done, value } = await this.#reader.read();
    if (done) {
      this.#done = true;
      this.#text += this.#decoder.decode();
    } else this.#text += this.#decoder.decode(value, { stream: true });
    const cut = this.#text.lastIndexOf('\n\n');
    if (cut < 0) return;
    this.events.push(...parseSse(this.#text.slice(0, cut + 2)));
    this.#text = this.#text.slice(cut + 2);
  }
}

/** POST a JSON body; the response as it comes. */
export function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

/** A RunAgentInput with one user message. */
export function runInput(task: string, runId: string, threadId = 'thread-1'): Record<string, unknown> {
  return { threadId, runId, messages: [{ id: 'u1', role: 'user', content: task }], tools: [], context: [], state: {}, forwardedProps: {} };
}

/**
 * A model whose text deltas come only as the test lets them: `release(n)` lets n more through.
 * A page that reads after a release gets the released deltas as one event (the stream joins
 * what waited), so a test chooses where text events begin and end.
 */
export function pacedModel(model: InferenceProvider): { provider: InferenceProvider; release(count: number): void } {
  let permits = 0;
  const waiting: (() => void)[] = [];
  const permit = (): Promise<void> | undefined => {
    if (permits === 0) return new Promise((resolve) => waiting.push(resolve));
    permits--;
    return undefined;
  };
  const provider: InferenceProvider = {
    name: model.name,
    defaultModel: model.defaultModel,
    supportsNativeTools: model.supportsNativeTools,
    supportsStructuredOutput: model.supportsStructuredOutput,
    complete: (request) => model.complete(request),
    async *stream(request) {
      for await (const event of model.stream(request)) {
        if (event.type === 'text.delta') await permit();
        yield event;
      }
    },
  };
  return {
    provider,
    release(count) {
      let left = count;
      for (; left > 0 && waiting.length > 0; left--) waiting.shift()?.();
      permits += left;
    },
  };
}

/** SSE text as the chunks the AI SDK's transport hands its reader, each checked against its schema. */
export function chunksOf(body: ReadableStream<Uint8Array>): ReadableStream<UIMessageChunk> {
  return parseJsonEventStream({ stream: body, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(result, controller) {
        if (!result.success) throw result.error;
        controller.enqueue(result.value);
      },
    }),
  );
}

export type UiPart = Record<string, unknown> & { type: string };
export const partsOf = (message: UIMessage) => message.parts as UiPart[];

/** What useChat's default transport posts. */
export const chatBody = (messages: readonly UIMessage[]) => ({ id: 'chat-1', messages, trigger: 'submit-message', messageId: messages.at(-1)?.role === 'assistant' ? messages.at(-1)?.id : undefined });

/** The assistant message the AI SDK's reader builds from a response, continuing `message` if given. */
export async function messageOf(response: Response, message?: UIMessage): Promise<UIMessage> {
  if (response.status !== 200) throw new Error(`the response is ${response.status}: ${await response.text()}`);
  let last: UIMessage | undefined;
  const stream = chunksOf(response.body as ReadableStream<Uint8Array>);
  for await (const built of readUIMessageStream({ stream, terminateOnError: true, ...(message === undefined ? {} : { message: structuredClone(message) }) })) last = built;
  if (last === undefined) throw new Error('the stream built no message');
  return structuredClone(last);
}

/** What `defaultApplyEvents` is, seen through this package's rxjs (`@ag-ui/client` has its own copy). */
type ApplyEvents = (input: RunAgentInput, events: Observable<BaseEvent>, agent: AbstractAgent, subscribers: []) => Observable<{ messages?: AgUiMessage[] }>;

/** A page's AG-UI messages as `@ag-ui/client` builds them from the events it got (its own `defaultApplyEvents`). */
export async function agUiMessagesOf(events: readonly BaseEvent[]): Promise<AgUiMessage[]> {
  const page = new (class extends AbstractAgent {
    run(): never {
      throw new Error('a page that only applies events runs nothing');
    }
  })({ threadId: 'thread-page' });
  const input: RunAgentInput = { threadId: 'thread-page', runId: 'run-page', messages: [], tools: [], context: [], state: {}, forwardedProps: {} };
  let messages: AgUiMessage[] = [];
  const mutations = await lastValueFrom((defaultApplyEvents as unknown as ApplyEvents)(input, from(events), page, []).pipe(toArray()));
  for (const mutation of mutations) if (mutation.messages !== undefined) messages = mutation.messages;
  return structuredClone(messages);
}

/** What `addToolApprovalResponse` does to the message before useChat sends it back. */
export function answered(message: UIMessage, approvalId: string, approved: boolean, reason?: string): UIMessage {
  const parts = partsOf(message).map((part) =>
    part.state === 'approval-requested' && (part.approval as { id: string }).id === approvalId ? { ...part, state: 'approval-responded', approval: { id: approvalId, approved, ...(reason === undefined ? {} : { reason }) } } : part,
  );
  return { ...message, parts } as UIMessage;
}

/** `serve` for the tests of one file: call it at the file's top level; each test's servers are closed after it. */
export function servedPerTest(): (handler: WebHandler) => Promise<Served> {
  const servers: Served[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  return async (handler) => {
    const server = await serve(handler);
    servers.push(server);
    return server;
  };
}
