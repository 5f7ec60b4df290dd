/**
 * Which run a server's request (sampling, elicitation) is for. Over streamable HTTP a server
 * sends the requests a tool call causes on that call's own response stream; the SDK's client
 * does not say which stream a request came on, so this watches the streams itself: the POST of
 * each `tools/call` is tied to the run that made it, and every request seen on that POST's
 * stream to the same run. The stream is read before the SDK's own reader gets each chunk, so the
 * tie exists by the time the request's handler runs. Over stdio (and old SSE) nothing links a
 * request to a call; those stay unattributed.
 */
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { createParser } from 'eventsource-parser';

/** A run with tool calls in flight on a server; `ended` aborts when its last call there ends. */
export interface RunInFlight {
  readonly runId: string;
  readonly ended: AbortSignal;
}

/**
 * The run a server's request is for; otherwise how many runs had calls in flight (none, or
 * several the request cannot be told apart from), for the refusal to say.
 */
export type RunFor = (serverRequestId: RequestId) => RunInFlight | number;

/** The ties of one connection's tool calls to runs, and of the server's requests to those calls. */
export interface CallAttribution {
  /** The fetch the HTTP transport uses: it reads each tool call's response stream. */
  readonly fetch: FetchLike;
  /** Note, on the transport, the JSON-RPC id of each tool call whose params were `tag`ged. */
  watch(transport: Transport): void;
  /** The params object of a tool call about to be made, and the run making it. */
  tag(params: object, runId: string): void;
  /** The run whose tool call's stream carried this server request, if any did. */
  runOf(serverRequestId: RequestId): string | undefined;
  /** Drop what was kept for a call that ended. */
  untag(params: object): void;
}

interface JsonRpcLike {
  readonly id?: RequestId;
  readonly method?: string;
  readonly params?: unknown;
}

const isMessage = (value: unknown): value is JsonRpcLike => typeof value === 'object' && value !== null;

/** The JSON-RPC messages of a request body (one, or a batch), or none when it is not JSON. */
function messagesOf(body: unknown): JsonRpcLike[] {
  if (typeof body !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(body);
    return (Array.isArray(parsed) ? parsed : [parsed]).filter(isMessage);
  } catch {
    return [];
  }
}

/**
 * A connection's attribution: give `fetch` to the HTTP transport, `watch` the transport, and
 * `tag` each tool call's params before calling.
 *
 * @example
 * ```ts
 * const attribution = callAttribution();
 * const transport = new StreamableHTTPClientTransport(url, { fetch: attribution.fetch });
 * attribution.watch(transport);
 * ```
 */
export function callAttribution(): CallAttribution {
  const runsByParams = new WeakMap<object, string>();
  // A tool call's JSON-RPC id → its run; a server request's id → the call whose stream carried it.
  const callRuns = new Map<RequestId, { readonly runId: string; readonly params: object }>();
  const requestCalls = new Map<RequestId, RequestId>();

  /** The response stream of a tool call, read on its way to the SDK: each server request on it is tied to the call. */
  function watchStream(body: ReadableStream<Uint8Array>, callId: RequestId): ReadableStream<Uint8Array> {
    const decoder = new TextDecoder();
    const parser = createParser({
      onEvent: (event) => {
        const message = messagesOf(event.data)[0];
        if (message?.method !== undefined && message.id !== undefined) requestCalls.set(message.id, callId);
      },
    });
    return body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          parser.feed(decoder.decode(chunk, { stream: true }));
          controller.enqueue(chunk);
        },
      }),
    );
  }

  const attributingFetch: FetchLike = async (url, init) => {
    const response = await fetch(url, init);
    if (init?.method !== 'POST' || response.body === null || !(response.headers.get('content-type') ?? '').includes('text/event-stream')) return response;
    const call = messagesOf(init.body).find((message) => message.method === 'tools/call' && message.id !== undefined && callRuns.has(message.id));
    if (call?.id === undefined) return response;
    return new Response(watchStream(response.body, call.id), { status: response.status, statusText: response.statusText, headers: response.headers });
  };

  return {
    fetch: attributingFetch,
    watch(transport) {
      const send = transport.send.bind(transport);
      transport.send = (message, options) => {
        if ('method' in message && message.method === 'tools/call' && 'id' in message && isMessage(message.params)) {
          const runId = runsByParams.get(message.params);
          if (runId !== undefined) callRuns.set(message.id, { runId, params: message.params });
        }
        return send(message, options);
      };
    },
    tag(params, runId) {
      runsByParams.set(params, runId);
    },
    runOf(serverRequestId) {
      const callId = requestCalls.get(serverRequestId);
      return callId === undefined ? undefined : callRuns.get(callId)?.runId;
    },
    untag(params) {
      runsByParams.delete(params);
      for (const [callId, call] of callRuns) {
        if (call.params !== params) continue;
        callRuns.delete(callId);
        for (const [requestId, owner] of requestCalls) if (owner === callId) requestCalls.delete(requestId);
      }
    },
  };
}
