/**
 * `toNodeListener`'s request side, its writes, and AG-UI's framing of the events it streams.
 */
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { EventType } from '@ag-ui/core';
import { EventEncoder } from '@ag-ui/encoder';
import { scriptedModel } from '../../src/testing/index.ts';
import { agUiProtocol, createAgUiHandler } from '../../src/web/agUi.ts';
import type { WebHandler } from '../../src/web/handler.ts';
import { toNodeListener } from '../../src/web/node.ts';
import { stopTrackedAgents, trackAgent } from '../support/agents.ts';
import { runInput, serve } from './support.ts';

/** POST `parts` as separate writes of one chunked body, each after the previous one was flushed. */
function postInParts(url: string, parts: readonly string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    const write = (i: number): void => {
      if (i === parts.length) return void req.end();
      req.write(parts[i], () => setImmediate(() => write(i + 1)));
    };
    write(0);
  });
}

/**
 * POST a chunked body (no content-length) of 64 KiB writes, each after the previous one was taken, until the answer
 * comes or `cap` bytes were sent; how many bytes had gone out when the answer came.
 */
function postUntilAnswered(url: string, cap: number): Promise<{ status: number; body: string; sentBeforeAnswer: number }> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      answered = true;
      const sentBeforeAnswer = sent;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (text: string) => (body += text));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, sentBeforeAnswer }));
    });
    // The server closes the connection on a refused body: a write after that fails, which is expected here.
    req.on('error', (error) => (answered ? undefined : reject(error)));
    const write = (): void => {
      if (answered) return;
      if (sent >= cap) return void req.end();
      sent += chunk.length;
      req.write(chunk, () => setImmediate(write));
    };
    write();
  });
}

describe('toNodeListener', () => {
  it('refuses a body past maxBodyBytes with a 413 as it arrives, without holding the rest or calling the handler', { timeout: 60_000 }, async () => {
    let called = 0;
    const server = createServer(
      toNodeListener(
        async () => {
          called++;
          return new Response('{}');
        },
        { maxBodyBytes: 256 * 1024 },
      ),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      // A client that would send 256 MiB: the answer comes long before, while the body still arrives.
      const answer = await postUntilAnswered(`http://127.0.0.1:${port}/api/agent`, 256 * 1024 * 1024);
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'web_request', message: expect.stringMatching(/larger than 262144 bytes/) } });
      expect(answer.sentBeforeAnswer).toBeLessThan(32 * 1024 * 1024);
      expect(called).toBe(0);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('refuses a body whose declared length is past maxBodyBytes before reading it', { timeout: 20_000 }, async () => {
    const server = await serve(async () => new Response('{}'));
    try {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(server.url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(8 * 1024 * 1024) } }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (text: string) => (body += text));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        // Only the start of the declared body is sent: the answer does not wait for the rest.
        req.write('{"a":1');
      });
      expect(answer.status).toBe(413);
      expect(answer.body).toMatch(/larger than 4194304 bytes/);
    } finally {
      await server.close();
    }
  });

  it('hands the handler a body that arrived in several writes whole', { timeout: 20_000 }, async () => {
    const server = await serve(async (request) => new Response(JSON.stringify({ method: request.method, got: await request.text() })));
    try {
      const parts = ['{"a":', '"one', ' two"', ',"b":[1,2,3]}'];
      const answer = await postInParts(server.url, parts);
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toEqual({ method: 'POST', got: parts.join('') });
    } finally {
      await server.close();
    }
  });
});

/** `handler` on 127.0.0.1, counting the writes to each socket (what goes to the kernel: one write or writev each). */
async function serveCountingWrites(handler: WebHandler): Promise<{ url: string; writes(): number; close(): Promise<void> }> {
  let writes = 0;
  const server = createServer(toNodeListener(handler));
  server.on('connection', (socket: Socket) => {
    const counted = socket as unknown as { _writeGeneric(...args: unknown[]): unknown };
    const write = counted._writeGeneric.bind(socket);
    counted._writeGeneric = (...args: unknown[]) => {
      writes++;
      return write(...args);
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/agent`,
    writes: () => writes,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe("toNodeListener's writes", () => {
  afterEach(() => stopTrackedAgents());

  it('sends a short run whole, headers, events and end, in one write', { timeout: 20_000 }, async () => {
    const agent = trackAgent({ model: { provider: scriptedModel([{ text: 'Hi there', chunks: ['Hi', ' there'] }]), stream: true } });
    const server = await serveCountingWrites(createAgUiHandler(agent));
    try {
      const response = await fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(runInput('Say hi', 'one-write')) });
      const body = await response.text();
      expect(body).toContain('"delta":"Hi there"');
      expect(body).toContain('RUN_FINISHED');
      expect(server.writes()).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('sends the headers of a stream that has nothing to say yet', { timeout: 20_000 }, async () => {
    let cancelled = false;
    const quiet = new ReadableStream<Uint8Array>({ cancel: () => void (cancelled = true) });
    const server = await serveCountingWrites(() => Promise.resolve(new Response(quiet, { headers: { 'content-type': 'text/event-stream' } })));
    try {
      const response = await new Promise<IncomingMessage>((resolve, reject) => httpRequest(server.url, resolve).on('error', reject).end());
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('text/event-stream');
      response.destroy();
      await expect.poll(() => cancelled).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe("AG-UI's frames", () => {
  const encoder = new EventEncoder();

  it('are what the AG-UI encoder sends, with an optional null dropped and a delta that reads "null" kept', () => {
    const events = [
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'null and void' },
      { type: EventType.TEXT_MESSAGE_START, messageId: 'm1', role: 'assistant' as const, name: null },
      { type: EventType.RUN_FINISHED, threadId: 't', runId: 'r' },
    ] as unknown as Parameters<typeof agUiProtocol.frame>[0][];
    const frames = events.map((event) => agUiProtocol.frame(event));
    expect(frames).toEqual(events.map((event) => encoder.encodeSSE(event)));
    expect(frames[0]).toContain('"delta":"null and void"');
    expect(frames[1]).not.toContain('"name"');
  });
});
