/**
 * The SSE body under a reader that falls behind: what waits for it is joined and bounded, the
 * run is fed again from its journal once the reader caught up, and every text arrives exact.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import { NO_DETAILS } from '../../src/events/agUiEncoder.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { agUiProtocol } from '../../src/web/agUi.ts';
import type { StreamEncoder } from '../../src/web/protocol.ts';
import { runFeed } from '../../src/web/runFeed.ts';
import { SSE_HEADERS, sseBody } from '../../src/web/sse.ts';
import type { Event as AgUiEvent } from '@ag-ui/core';
import { stopTrackedAgents, trackAgent } from '../support/agents.ts';
import { parseSse, serve } from './support.ts';
import { connect } from 'node:net';

afterEach(() => stopTrackedAgents());

const words = Array.from({ length: 200 }, (_, i) => `w${i} `);

/** A run streaming `chunks`, started and read by `sseBody` directly; encoders, entries encoded and the furthest entry counted. */
async function slowlyRead(maxAhead: number, journalCapacity?: number, chunks = words, settle = true) {
  const model = scriptedModel([{ text: chunks.join(''), chunks }]);
  const agent = trackAgent({ model: { provider: model, stream: true }, ...(journalCapacity === undefined ? {} : { observe: { journalCapacity } }) });
  const run = agent.start('Talk', { runId: 'run-slow' });
  const counts = { encoders: 0, encoded: 0, furthest: -1 };
  const encoder = (): StreamEncoder<AgUiEvent> => {
    counts.encoders++;
    const inner = agUiProtocol.encoder({ runId: run.runId, threadId: run.runId, details: NO_DETAILS });
    return {
      encode: (entry: JournalEntry) => {
        counts.encoded++;
        counts.furthest = Math.max(counts.furthest, entry.sequence);
        return inner.encode(entry);
      },
      failure: (message, code) => inner.failure(message, code),
    };
  };
  const feed = await runFeed({ agent, pollIntervalMs: 1000 }, run.runId);
  const body = sseBody(feed, encoder, agUiProtocol, undefined, new AbortController().signal, maxAhead);
  if (settle) await run.result;
  return { body, counts, run };
}

async function chunksOf(body: ReadableStream<Uint8Array>): Promise<string[]> {
  const decoder = new TextDecoder();
  const chunks: string[] = [];
  for await (const chunk of body) chunks.push(decoder.decode(chunk));
  return chunks;
}

describe('a stream whose reader falls behind', () => {
  it('stops encoding the run a bounded number of entries ahead, and feeds the reader from the journal as it catches up', async () => {
    const { body, counts } = await slowlyRead(10);
    // The run has ended (two hundred deltas) and nobody has read yet: the stream stopped following it.
    expect(counts.encoded).toBeLessThan(20);
    expect(counts.encoders).toBe(1);

    const chunks = await chunksOf(body);
    const events = chunks.flatMap((chunk) => parseSse(chunk));
    const text = events.flatMap(({ data }) => (data.type === 'TEXT_MESSAGE_CONTENT' ? [data.delta as string] : [])).join('');
    expect(text).toBe(words.join(''));
    // No chunk held more than the bound's worth of deltas, joined into one event.
    const deltasOf = (chunk: string) => parseSse(chunk).flatMap(({ data }) => (data.type === 'TEXT_MESSAGE_CONTENT' ? [data.delta as string] : []));
    for (const chunk of chunks) {
      expect(deltasOf(chunk).length).toBeLessThanOrEqual(1);
      expect(deltasOf(chunk).join('').split(' ').length - 1).toBeLessThanOrEqual(10);
    }
    expect(counts.encoders).toBeGreaterThan(10);
    expect(events.at(-1)?.data.type).toBe('RUN_FINISHED');
    const ids = events.map((e) => e.id as string);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('ends with an error event naming the cursor to reconnect with when the journal no longer holds the run\'s start', async () => {
    // A journal of 50 entries drops the run's first ones while the run streams.
    const { body } = await slowlyRead(10, 50);
    const events = (await chunksOf(body)).flatMap((chunk) => parseSse(chunk));
    const last = events.at(-1)?.data;
    expect(last).toMatchObject({ type: 'RUN_ERROR', code: 'web_stream' });
    const cursor = events.at(-2)?.id as string;
    expect(last?.message).toContain(`Last-Event-ID ${cursor}`);
    expect(events.slice(0, -1).every((e) => e.id !== undefined)).toBe(true);
  });

  it('is read by toNodeListener only as fast as the socket drains, so a client that does not read holds the stream back', { timeout: 60_000 }, async () => {
    // Sixteen megabytes of text: more than the kernel buffers for a socket nobody reads.
    const big = Array.from({ length: 2000 }, (_, i) => `${'x'.repeat(8 * 1024)}${i} `);
    const { body, counts, run } = await slowlyRead(10, undefined, big, false);
    const server = await serve(async () => new Response(body, { headers: SSE_HEADERS }));
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
    try {
      socket.pause();
      socket.write('GET /api/agent HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      await run.result;
      // Turns of the event loop in which a server that ignored backpressure would read the rest.
      for (let turn = 0; turn < 1000; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
      expect(counts.furthest).toBeGreaterThan(10);
      expect(counts.furthest).toBeLessThan(1200);
    } finally {
      socket.destroy();
      await server.close();
    }
  });
});
