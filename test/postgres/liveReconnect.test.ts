/**
 * A page following a durable run gets a model call's text live from the worker, in no journal. When it
 * drops mid-call and reconnects with the `Last-Event-ID` of the last event it had, it gets only the rest of
 * the message: live, if the call still streams, or from the journal's reply. The stock clients'
 * own reassembly (`@ag-ui/client`'s `defaultApplyEvents`, the AI SDK's `readUIMessageStream`) then builds
 * the messages a stream that never dropped builds: the call's whole text once.
 */
import type { ServerResponse } from 'node:http';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BaseEvent } from '@ag-ui/core';
import type { UIMessage } from 'ai';
import type { Agent } from '../../src/index.ts';
import { createPostgresRuntime, type PostgresRuntime } from '../../src/postgres/index.ts';
import { createAgUiHandler } from '../../src/web/agUi.ts';
import { createAiSdkHandler } from '../../src/web/aiSdk.ts';
import { chunksFor, listenLocally, sseBytes } from '../support/openaiServer.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { agUiMessagesOf, EventReader, messageOf, post, runInput, serve, type Served, type SseEvent } from '../web/support.ts';
import { streamingAgent } from './fixtures/agents.ts';
import { startWorker, stop } from './workerProcess.ts';

const missing = postgresMissing();

const TOKENS = Array.from({ length: 40 }, (_, i) => (i < 39 ? `word${i} ` : `word${i}.`));
const ANSWER = TOKENS.join('');
const FIRST_HALF = TOKENS.slice(0, TOKENS.length / 2).join('');

/** Sends the first half of its one reply, then holds the rest until `release()` (or a while, so a failure cannot hang). */
class HalfwayServer {
  #server: { close(): Promise<void> } | undefined;
  #release: () => void = () => undefined;
  #held: Promise<void> = Promise.resolve();
  baseURL = '';

  async start(): Promise<void> {
    const server = await listenLocally((_body, response) => void this.#reply(response));
    this.#server = server;
    this.baseURL = server.baseURL;
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
    return this.#server?.close() ?? Promise.resolve();
  }
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

  /** A live event's id names how much of the live message the page has with it. */
  const marked = (id: string | undefined) => id !== undefined && id.split('.').length === 3;
  const agUiMessages = (events: readonly SseEvent[]) => agUiMessagesOf(events.map((e) => e.data as unknown as BaseEvent));

  for (const streaming of [true, false]) {
    const when = streaming ? 'while the call still streams (the rest comes live)' : 'after the reply committed (the rest comes from the journal)';

    it(`AG-UI: a page that reconnects ${when} has the unbroken stream's messages, the call's text once`, { timeout: 90_000 }, async () => {
      const handler = await serve(createAgUiHandler(agent, { runtime, pollIntervalMs: 100 }));
      served.push(handler);
      const runId = `run-reconnect-agui-${streaming ? 'live' : 'committed'}`;
      const release = server.hold();
      const page = new EventReader(await post(handler.url, runInput('Count to forty.', runId)));
      const text = () => of(page.events, 'TEXT_MESSAGE_CONTENT').map((e) => e.data.delta).join('');
      await page.whilst(() => text().length < FIRST_HALF.length);
      expect(text()).toBe(FIRST_HALF);
      await page.drop();
      const lastId = page.events.findLast((e) => e.id !== undefined)?.id;
      expect(marked(lastId)).toBe(true);

      let reconnected: SseEvent[];
      if (streaming) {
        const again = new EventReader(await fetch(`${handler.url}/runs/${runId}/stream`, { headers: { 'last-event-id': lastId as string } }));
        await finish(runId, release);
        reconnected = await again.rest();
      } else {
        await finish(runId, release);
        reconnected = await new EventReader(await fetch(`${handler.url}/runs/${runId}/stream`, { headers: { 'last-event-id': lastId as string } })).rest();
      }
      // Live deltas name how much of the message the page has; committed events do not.
      expect(reconnected.some((e) => marked(e.id))).toBe(streaming);
      expect(of(reconnected, 'TEXT_MESSAGE_START')).toEqual([]);
      expect(of(reconnected, 'TEXT_MESSAGE_CONTENT').map((e) => e.data.delta).join('')).toBe(ANSWER.slice(FIRST_HALF.length));
      const whole = await new EventReader(await fetch(`${handler.url}/runs/${runId}/stream`)).rest();
      const messages = await agUiMessages([...page.events, ...reconnected]);
      expect(messages).toEqual(await agUiMessages(whole));
      expect(messages.map((message) => message.content)).toEqual([ANSWER]);
    });

    it(`AI SDK: a page that reconnects ${when} builds the unbroken stream's message with readUIMessageStream`, { timeout: 90_000 }, async () => {
      const handler = await serve(createAiSdkHandler(agent, { runtime, pollIntervalMs: 100 }));
      served.push(handler);
      const release = server.hold();
      const body = { id: `chat-reconnect-${streaming ? 'live' : 'committed'}`, messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Count to forty.' }] }], trigger: 'submit-message' };
      const first = await framesUntil(await post(handler.url, body), (frames) => deltas(frames).length >= FIRST_HALF.length);
      expect(deltas(first)).toBe(FIRST_HALF);
      const runId = first.find(({ chunk }) => chunk.type === 'start')?.chunk.messageId as string;
      const lastId = first.findLast((frame) => frame.id !== undefined)?.id as string;
      expect(marked(lastId)).toBe(true);

      const reconnect = () => fetch(`${handler.url}/runs/${runId}/stream`, { headers: { 'last-event-id': lastId } });
      let reconnected: Frame[];
      if (streaming) {
        // The reconnect's response is in hand (the stream follows the run) before the rest of the call is let go.
        const again = await reconnect();
        await finish(runId, release);
        reconnected = await framesUntil(again, () => false);
      } else {
        await finish(runId, release);
        reconnected = await framesUntil(await reconnect(), () => false);
      }
      expect(reconnected.some((frame) => marked(frame.id))).toBe(streaming);
      expect(reconnected.filter(({ chunk }) => chunk.type === 'text-start')).toEqual([]);
      expect(deltas(reconnected)).toBe(ANSWER.slice(FIRST_HALF.length));
      const rejoined = await messageOf(new Response([...first, ...reconnected].map((frame) => `${frame.raw}\n\n`).join('')));
      const whole = await messageOf(await fetch(`${handler.url}/runs/${runId}/stream`));
      // A follower reads the worker's live deltas before it polled the step the call began (its start-step): the
      // live page has its step start after the text, the journal's reading before it. Parts otherwise in order.
      const steps = (message: UIMessage) => message.parts.filter((part) => part.type === 'step-start').length;
      const stepless = (message: UIMessage) => ({ ...message, parts: message.parts.filter((part) => part.type !== 'step-start') });
      expect(stepless(rejoined)).toEqual(stepless(whole));
      expect(steps(rejoined)).toBe(steps(whole));
      expect(rejoined.parts.filter((part) => part.type === 'text')).toEqual([expect.objectContaining({ text: ANSWER, state: 'done' })]);
    });
  }
});

const of = (events: readonly SseEvent[], type: string) => events.filter((e) => e.data.type === type);
