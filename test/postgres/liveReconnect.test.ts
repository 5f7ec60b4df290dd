/**
 * A page following a durable run gets a model call's text live from the worker, in no journal and without
 * event ids. When it drops mid-call and reconnects with the `Last-Event-ID` of the last event it had, the
 * journal's reply brings the call's text again, under the id its live deltas had: the page's message is
 * the call's whole text once, as on a stream that never dropped.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/index.ts';
import { createPostgresRuntime, type PostgresRuntime } from '../../src/postgres/index.ts';
import { createAgUiHandler } from '../../src/web/agUi.ts';
import { createAiSdkHandler } from '../../src/web/aiSdk.ts';
import { chunksFor, sseBytes } from '../support/openaiServer.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { EventReader, messageOf, post, runInput, serve, type Served, type SseEvent } from '../web/support.ts';
import { streamingAgent } from './fixtures/agents.ts';
import { startWorker, stop } from './workerProcess.ts';

const missing = postgresMissing();

const TOKENS = Array.from({ length: 40 }, (_, i) => (i < 39 ? `word${i} ` : `word${i}.`));
const ANSWER = TOKENS.join('');
const FIRST_HALF = TOKENS.slice(0, TOKENS.length / 2).join('');

/** Sends the first half of its one reply, then holds the rest until `release()` (or a while, so a failure cannot hang). */
class HalfwayServer {
  #server: Server | undefined;
  #release: () => void = () => undefined;
  #held: Promise<void> = Promise.resolve();
  baseURL = '';

  async start(): Promise<void> {
    this.#server = createServer((request, response) => {
      request.resume();
      request.on('end', () => void this.#reply(response));
    });
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve));
    this.baseURL = `http://127.0.0.1:${(this.#server?.address() as AddressInfo).port}/v1`;
  }

  hold(): () => void {
    this.#held = new Promise<void>((resolve) => {
      const fallback = setTimeout(resolve, 30_000);
      this.#release = () => (clearTimeout(fallback), resolve());
    });
    return () => this.#release();
  }

  async #reply(response: ServerResponse): Promise<void> {
    const chunks = chunksFor({ textPieces: TOKENS, usage: { prompt_tokens: 10, completion_tokens: TOKENS.length, total_tokens: 10 + TOKENS.length } });
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    // The role chunk and the first half of the text, then the hold, then the rest.
    const half = 1 + TOKENS.length / 2;
    for (const chunk of chunks.slice(0, half)) response.write(sseBytes([chunk], { done: false }));
    await this.#held;
    for (const chunk of chunks.slice(half)) response.write(sseBytes([chunk], { done: false }));
    response.end('data: [DONE]\n\n');
  }

  close(): Promise<void> {
    this.#server?.closeAllConnections();
    return new Promise((resolve) => (this.#server === undefined ? resolve() : this.#server.close(() => resolve())));
  }
}

/** A page's AG-UI messages by id: a start for an id it has begins that message again (as the journal's reply does). */
function agUiTexts(events: readonly SseEvent[]): string[] {
  const byMessage = new Map<string, string>();
  for (const { data } of events) {
    if (data.type === 'TEXT_MESSAGE_START') byMessage.set(data.messageId as string, '');
    if (data.type === 'TEXT_MESSAGE_CONTENT') byMessage.set(data.messageId as string, `${byMessage.get(data.messageId as string)}${data.delta as string}`);
  }
  return [...byMessage.values()];
}

interface Frame {
  readonly raw: string;
  readonly id: string | undefined;
  readonly chunk: { readonly type: string; readonly id?: string; readonly delta?: string; readonly messageId?: string };
}

/** An AI SDK response's frames as they arrive, read until `enough` holds or the stream ends, then dropped. */
async function framesUntil(response: Response, enough: (frames: readonly Frame[]) => boolean): Promise<Frame[]> {
  const frames: Frame[] = [];
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!enough(frames)) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    const blocks = text.split('\n\n');
    text = blocks.pop() ?? '';
    for (const raw of blocks.filter((block) => block.trim() !== '')) {
      const id = /^id: (.+)$/m.exec(raw)?.[1];
      const data = /^data: (.+)$/m.exec(raw)?.[1] ?? '{}';
      frames.push({ raw, id, chunk: JSON.parse(data) as Frame['chunk'] });
    }
  }
  await reader.cancel();
  return frames;
}

const deltas = (frames: readonly Frame[]) => frames.flatMap(({ chunk }) => (chunk.type === 'text-delta' ? [chunk.delta ?? ''] : [])).join('');

describe.skipIf(missing !== '')('a page that reconnects after a durable run streamed part of a call to it', () => {
  const server = new HalfwayServer();
  let worker: ChildProcess | undefined;
  let runtime: PostgresRuntime;
  let agent: Agent;
  const served: Served[] = [];

  beforeAll(async () => {
    await server.start();
    const url = await freshDatabase('livereconnect');
    runtime = createPostgresRuntime({ connectionString: url, migrate: true, poolSize: 4 });
    await runtime.migrate();
    agent = streamingAgent(runtime, server.baseURL);
    worker = await startWorker(url, { streamBaseURL: server.baseURL, concurrency: 2 });
  }, 60_000);
  afterAll(async () => {
    if (worker !== undefined) await stop(worker);
    await Promise.all(served.map((s) => s.close()));
    await runtime?.close();
    await server.close();
  });

  /** Lets the held reply go and resolves once the run ended. */
  function finish(runId: string, release: () => void): Promise<void> {
    return new Promise<void>((resolve) => {
      const events = agent.events$.subscribe((entry) => {
        if (entry.runId !== runId || entry.event.type !== 'run.terminated') return;
        events.unsubscribe();
        resolve();
      });
      release();
    });
  }

  it('AG-UI: the live text and the journal’s reply are one message, the whole text once', { timeout: 90_000 }, async () => {
    const handler = await serve(createAgUiHandler(agent, { runtime, pollIntervalMs: 100 }));
    served.push(handler);
    const runId = 'run-reconnect-agui';
    const release = server.hold();
    const page = new EventReader(await post(handler.url, runInput('Count to forty.', runId)));
    const text = () => of(page.events, 'TEXT_MESSAGE_CONTENT').map((e) => e.data.delta).join('');
    await page.whilst(() => text().length < FIRST_HALF.length);
    expect(text()).toBe(FIRST_HALF);
    await page.drop();
    await finish(runId, release);

    const lastId = page.events.findLast((e) => e.id !== undefined)?.id as string;
    const reconnected = await new EventReader(await fetch(`${handler.url}/runs/${runId}/stream`, { headers: { 'last-event-id': lastId } })).rest();
    const rejoined = [...page.events, ...reconnected];
    expect(agUiTexts(rejoined)).toEqual([ANSWER]);
    expect(new Set(of(rejoined, 'TEXT_MESSAGE_START').map((e) => e.data.messageId)).size).toBe(1);
    // As the run reads from its start, unbroken.
    const whole = await new EventReader(await fetch(`${handler.url}/runs/${runId}/stream`)).rest();
    expect(agUiTexts(whole)).toEqual([ANSWER]);
    expect(of(whole, 'TEXT_MESSAGE_START').map((e) => e.data.messageId)).toEqual(of(rejoined, 'TEXT_MESSAGE_START').slice(0, 1).map((e) => e.data.messageId));
  });

  it('AI SDK: the part the reconnect starts again replaces the live one, and readUIMessageStream builds the unbroken run’s message', { timeout: 90_000 }, async () => {
    const handler = await serve(createAiSdkHandler(agent, { runtime, pollIntervalMs: 100 }));
    served.push(handler);
    const release = server.hold();
    const body = { id: 'chat-reconnect', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Count to forty.' }] }], trigger: 'submit-message' };
    const first = await framesUntil(await post(handler.url, body), (frames) => deltas(frames).length >= FIRST_HALF.length);
    expect(deltas(first)).toBe(FIRST_HALF);
    const runId = first.find(({ chunk }) => chunk.type === 'start')?.chunk.messageId as string;
    await finish(runId, release);

    const lastId = first.findLast((frame) => frame.id !== undefined)?.id as string;
    const reconnected = await framesUntil(await fetch(`${handler.url}/runs/${runId}/stream`, { headers: { 'last-event-id': lastId } }), () => false);
    // A part the reconnect starts again (its id) is the page's unfinished one, whole this time: the page lets the old one go.
    const restarted = new Set(reconnected.flatMap(({ chunk }) => (chunk.type === 'text-start' || chunk.type === 'reasoning-start' ? [chunk.id] : [])));
    const kept = first.filter(({ chunk }) => !(chunk.type.startsWith('text-') || chunk.type.startsWith('reasoning-')) || !restarted.has(chunk.id));
    const rejoined = await messageOf(new Response([...kept, ...reconnected].map((frame) => `${frame.raw}\n\n`).join('')));
    const whole = await messageOf(await fetch(`${handler.url}/runs/${runId}/stream`));
    expect(rejoined.parts.filter((part) => part.type === 'text')).toEqual([expect.objectContaining({ text: ANSWER, state: 'done' })]);
    expect(rejoined).toEqual(whole);
  });
});

const of = (events: readonly SseEvent[], type: string) => events.filter((e) => e.data.type === type);
