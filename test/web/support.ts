/**
 * A web handler on a real Node HTTP server on 127.0.0.1, and a plain SSE reader for the tests
 * that need to cut a stream where they choose.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { EventSchemas } from '@ag-ui/core/schemas';
import { defineTool } from '../../src/tools/defineTool.ts';
import { toNodeListener } from '../../src/web/node.ts';
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

/**
 * Read a stream until `stopAfter` events arrived (then drop the connection), or to its end.
 * Returns the events read, whole ones only.
 */
export async function readEvents(response: Response, stopAfter = Infinity): Promise<SseEvent[]> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  let events: SseEvent[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    const whole = text.slice(0, text.lastIndexOf('\n\n') + 2);
    events = parseSse(whole);
    if (events.length >= stopAfter) {
      await reader.cancel();
      return events.slice(0, stopAfter);
    }
  }
  return parseSse(text);
}

/** A RunAgentInput with one user message. */
export function runInput(task: string, runId: string, threadId = 'thread-1'): Record<string, unknown> {
  return { threadId, runId, messages: [{ id: 'u1', role: 'user', content: task }], tools: [], context: [], state: {}, forwardedProps: {} };
}
