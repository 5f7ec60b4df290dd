/**
 * A scripted OpenAI-compatible server on 127.0.0.1 for provider tests: each test queues the
 * replies it wants (completions, SSE streams split at chosen byte offsets, 429/5xx/4xx, resets,
 * slow and malformed replies) and asserts on the requests the server recorded.
 */
import { createServer } from 'node:http';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The parsed JSON body (the raw text when it is not JSON). */
  readonly body: unknown;
}

export type ScriptedReply =
  | { readonly kind: 'json'; readonly status?: number; readonly body: unknown; readonly headers?: Readonly<Record<string, string>> }
  | { readonly kind: 'raw'; readonly status?: number; readonly contentType: string; readonly body: string }
  | {
      readonly kind: 'sse';
      /** Raw bytes, written one piece at a time with `gapMs` between them. */
      readonly pieces: readonly Uint8Array[];
      readonly gapMs?: number;
      /** After the pieces: finish the response cleanly, destroy the socket, or leave it hanging. */
      readonly end?: 'end' | 'destroy' | 'hang';
    }
  | { readonly kind: 'reset' }
  | { readonly kind: 'delay'; readonly ms: number; readonly then: ScriptedReply }
  /** A reply computed from the request (e.g. a 401 that echoes the key, as real servers do). */
  | { readonly kind: 'custom'; readonly respond: (request: RecordedRequest) => ScriptedReply };

export interface OpenAIServer {
  /** Base URL to give the provider (`http://127.0.0.1:<port>/v1`). */
  readonly baseURL: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Queue replies; each request takes the next one. */
  enqueue(...replies: ScriptedReply[]): void;
  /** Forget queued replies and recorded requests (between tests). */
  reset(): void;
  /** Stop listening and destroy every connection and pending timer. */
  close(): Promise<void>;
}

/**
 * One server for a test file: started before its tests, emptied before each, closed after all.
 * Returns a getter (the server exists only once `beforeAll` has run).
 */
export function useOpenAIServer(): () => OpenAIServer {
  let server: OpenAIServer | undefined;
  beforeAll(async () => {
    server = await startOpenAIServer();
  });
  beforeEach(() => server?.reset());
  afterAll(() => server?.close());
  return () => {
    if (server === undefined) throw new Error('useOpenAIServer(): the server starts in beforeAll; use it inside a test.');
    return server;
  };
}

/** Start a server on an ephemeral port of 127.0.0.1. */
export async function startOpenAIServer(): Promise<OpenAIServer> {
  const queue: ScriptedReply[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<ReturnType<typeof setTimeout>>();

  const wait = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  async function send(reply: ScriptedReply, req: IncomingMessage, res: ServerResponse, recorded: RecordedRequest): Promise<void> {
    if (res.destroyed) return;
    switch (reply.kind) {
      case 'custom':
        return send(reply.respond(recorded), req, res, recorded);
      case 'json': {
        const text = JSON.stringify(reply.body);
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
        res.end(text);
        return;
      }
      case 'raw':
        res.writeHead(reply.status ?? 200, { 'content-type': reply.contentType });
        res.end(reply.body);
        return;
      case 'reset':
        req.socket.destroy();
        return;
      case 'delay':
        await wait(reply.ms);
        return send(reply.then, req, res, recorded);
      case 'sse': {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.flushHeaders();
        for (const piece of reply.pieces) {
          if (res.destroyed) return;
          res.write(piece);
          await wait(reply.gapMs ?? 1);
        }
        if (reply.end === 'destroy') req.socket.destroy();
        else if (reply.end !== 'hang') res.end();
        return;
      }
    }
  }

  const server = createServer((req, res) => {
    // A client that gave up (timeout, abort) leaves writes to a dead socket; that is expected here.
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep the raw text
      }
      const recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      const reply = queue.shift() ?? reply500('openaiServer: no scripted reply left');
      send(reply, req, res, recorded).catch(() => req.socket.destroy());
    });
  });
  server.on('connection', (socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...replies) => void queue.push(...replies),
    reset() {
      queue.length = 0;
      requests.length = 0;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

function reply500(message: string): ScriptedReply {
  return { kind: 'json', status: 500, body: { error: { message, type: 'server_error' } } };
}

// ---------------------------------------------------------------------------------------------
// Reply builders

export interface ScriptedToolCall {
  readonly id: string;
  readonly name: string;
  /** The argument JSON in the fragments a stream sends it in (joined for a plain completion). */
  readonly argumentPieces: readonly string[];
}

export interface ReplySpec {
  readonly model?: string;
  /** Reply text as streamed fragments (joined for a plain completion); none = no text. */
  readonly textPieces?: readonly string[];
  readonly toolCalls?: readonly ScriptedToolCall[];
  readonly finishReason?: string;
  readonly usage?: { readonly prompt_tokens: number; readonly completion_tokens: number; readonly total_tokens: number } | null;
}

const DEFAULT_USAGE = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 };

/** A non-streamed chat.completion body. */
export function completionBody(spec: ReplySpec = {}): Record<string, unknown> {
  const text = spec.textPieces === undefined ? null : spec.textPieces.join('');
  const toolCalls = (spec.toolCalls ?? []).map((call) => ({
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.argumentPieces.join('') },
  }));
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: spec.model ?? 'gpt-4o-mini-2024-07-18',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        finish_reason: spec.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
      },
    ],
    ...(spec.usage === null ? {} : { usage: spec.usage ?? DEFAULT_USAGE }),
  };
}

/** The chat.completion.chunk objects OpenAI streams for the same reply. */
export function chunksFor(spec: ReplySpec = {}): Record<string, unknown>[] {
  const model = spec.model ?? 'gpt-4o-mini-2024-07-18';
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model,
    choices,
    ...extra,
  });
  const delta = (d: Record<string, unknown>, finish: string | null = null) => chunk([{ index: 0, delta: d, finish_reason: finish }]);
  const out = [delta({ role: 'assistant', content: '' })];
  for (const piece of spec.textPieces ?? []) out.push(delta({ content: piece }));
  (spec.toolCalls ?? []).forEach((call, index) => {
    out.push(delta({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const piece of call.argumentPieces) out.push(delta({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  const toolCalls = spec.toolCalls ?? [];
  out.push(delta({}, spec.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop')));
  if (spec.usage !== null) out.push(chunk([], { usage: spec.usage ?? DEFAULT_USAGE }));
  return out;
}

/** Chunks as SSE bytes; `done: false` leaves out the final `data: [DONE]`. */
export function sseBytes(chunks: readonly unknown[], options: { readonly done?: boolean } = {}): Uint8Array {
  const text = chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('') + (options.done === false ? '' : 'data: [DONE]\n\n');
  return new TextEncoder().encode(text);
}

/** Split bytes at the given offsets (any order, duplicates and out-of-range ignored). */
export function splitAt(bytes: Uint8Array, offsets: readonly number[]): Uint8Array[] {
  const cuts = [...new Set(offsets.filter((offset) => offset > 0 && offset < bytes.length))].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let start = 0;
  for (const cut of [...cuts, bytes.length]) {
    pieces.push(bytes.subarray(start, cut));
    start = cut;
  }
  return pieces;
}

export const reply = {
  completion: (spec: ReplySpec = {}): ScriptedReply => ({ kind: 'json', body: completionBody(spec) }),
  json: (body: unknown, status = 200, headers: Record<string, string> = {}): ScriptedReply => ({ kind: 'json', status, body, headers }),
  /** The reply as an SSE stream, its bytes split at `offsets` (default: one write per event). */
  stream: (spec: ReplySpec = {}, offsets?: readonly number[], gapMs?: number): ScriptedReply => {
    const bytes = sseBytes(chunksFor(spec));
    return { kind: 'sse', pieces: offsets === undefined ? eventPieces(bytes) : splitAt(bytes, offsets), ...(gapMs === undefined ? {} : { gapMs }) };
  },
  /** Only the first `events` SSE events of the reply, then the connection ends as `end` says. */
  streamCut: (spec: ReplySpec, events: number, end: 'end' | 'destroy' | 'hang' = 'end'): ScriptedReply => ({
    kind: 'sse',
    pieces: chunksFor(spec).slice(0, events).map((chunk) => sseBytes([chunk], { done: false })),
    end,
  }),
  rateLimited: (wait: { readonly retryAfter?: string; readonly retryAfterMs?: number } = {}): ScriptedReply =>
    reply.error(429, 'Rate limit reached for requests', 'rate_limit_exceeded', {
      ...(wait.retryAfter === undefined ? {} : { 'retry-after': wait.retryAfter }),
      ...(wait.retryAfterMs === undefined ? {} : { 'retry-after-ms': String(wait.retryAfterMs) }),
    }),
  error: (status: number, message = `error ${status}`, code: string | null = null, headers: Record<string, string> = {}): ScriptedReply => ({
    kind: 'json',
    status,
    body: { error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', code } },
    headers,
  }),
  contextLength: (): ScriptedReply =>
    reply.error(400, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.", 'context_length_exceeded'),
  reset: (): ScriptedReply => ({ kind: 'reset' }),
  slow: (ms: number, then: ScriptedReply): ScriptedReply => ({ kind: 'delay', ms, then }),
  custom: (respond: (request: RecordedRequest) => ScriptedReply): ScriptedReply => ({ kind: 'custom', respond }),
  malformed: (): ScriptedReply => ({ kind: 'raw', contentType: 'application/json', body: '{"id":"chatcmpl-x","choices":[{"message":' }),
};

/** One piece per SSE event (split after each blank line). */
function eventPieces(bytes: Uint8Array): Uint8Array[] {
  const offsets: number[] = [];
  for (let i = 1; i < bytes.length; i++) if (bytes[i] === 0x0a && bytes[i - 1] === 0x0a) offsets.push(i + 1);
  return splitAt(bytes, offsets);
}

/** A hand-written model server on 127.0.0.1 (a test's own pacing of a reply): `onRequest` gets each request's body once read. */
export async function listenLocally(onRequest: (body: string, response: ServerResponse) => void): Promise<{ readonly baseURL: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => onRequest(body, response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
