/**
 * The SDK's client does not say which response stream a server request came on, so this reads
 * each `tools/call` stream before the SDK does and ties its requests to the call's run. Over stdio
 * nothing links a request to a call; those stay unattributed.
 */
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { createParser } from 'eventsource-parser';

/** `ended` aborts when the run's last call on the server ends. */
export interface RunInFlight {
  readonly runId: string;
  readonly ended: AbortSignal;
}

/** Otherwise how many runs had calls in flight, for the refusal to say. */
export type RunFor = (serverRequestId: RequestId) => RunInFlight | number;

export interface CallAttribution {
  readonly fetch: FetchLike;
  watch(transport: Transport): void;
  tag(params: object, runId: string): void;
  runOf(serverRequestId: RequestId): string | undefined;
  untag(params: object): void;
}

interface JsonRpcLike {
  readonly id?: RequestId;
  readonly method?: string;
  readonly params?: unknown;
}

const isMessage = (value: unknown): value is JsonRpcLike => typeof value === 'object' && value !== null;

function messagesOf(body: unknown): JsonRpcLike[] {
  if (typeof body !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(body);
    return (Array.isArray(parsed) ? parsed : [parsed]).filter(isMessage);
  } catch {
    return [];
  }
}

export function callAttribution(): CallAttribution {
  const runsByParams = new WeakMap<object, string>();
  const callRuns = new Map<RequestId, { readonly runId: string; readonly params: object }>();
  const requestCalls = new Map<RequestId, RequestId>();

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
