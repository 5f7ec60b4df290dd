/**
 * `toNodeListener`'s request side, and AG-UI's framing of the events it streams.
 */
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { EventType } from '@ag-ui/core';
import { EventEncoder } from '@ag-ui/encoder';
import { agUiProtocol } from '../../src/web/agUi.ts';
import { serve } from './support.ts';

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

describe('toNodeListener', () => {
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
