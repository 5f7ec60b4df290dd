/**
 * Token streaming from durable workers: a worker in another process streams a model call from a real
 * OpenAI-compatible server over HTTP and publishes its deltas; this process's `agent.tokens$`, its
 * events and the AG-UI handler show them while the call is on, then the committed reply adds no text.
 */
import type { ServerResponse } from 'node:http';
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/index.ts';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import { createPostgresRuntime, type PostgresRuntime } from '../../src/postgres/index.ts';
import { createAgUiHandler } from '../../src/web/agUi.ts';
import { createAiSdkHandler } from '../../src/web/aiSdk.ts';
import { engineOf } from '../../src/postgres/runtime.ts';
import { TOKEN_LOCK, TokenPublisher } from '../../src/postgres/tokens.ts';
import { FOLLOW_LOCK } from '../../src/postgres/notices.ts';
import { createRedactor } from '../../src/security/redactor.ts';
import { chunksFor, listenLocally, sseBytes } from '../support/openaiServer.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { EventReader, post, runInput, serve, type Served, type SseEvent } from '../web/support.ts';
import { STREAM_SECRET, streamingAgent, streamingSystem } from './fixtures/agents.ts';
import type { AgentSystem } from '../../src/system/types.ts';
import { startWorker, stop } from './workerProcess.ts';

const missing = postgresMissing();

/** Fifty tokens, the reply to every task but the one about the key. */
const TOKENS = Array.from({ length: 50 }, (_, i) => (i < 49 ? `word${i} ` : `word${i}.`));
const ANSWER = TOKENS.join('');
/** What the server sends of it before a hold: the role chunk and the first half of the text. */
const FIRST_HALF = TOKENS.slice(0, Math.ceil(TOKENS.length / 2)).join('');
/** The secret split across two tokens, as a model would write it. */
const KEY_TOKENS = ['Here ', 'it ', 'is: ', STREAM_SECRET.slice(0, 9), STREAM_SECRET.slice(9), ' and ', 'keep ', 'it ', 'safe.'];

/** The reply before the lookup. */
const LOOKUP_TOKENS = ['Let ', 'me ', 'look ', 'that ', 'up ', 'first.'];
/** The lead's reply as it delegates (asked to), and once the researcher answered. */
const DELEGATING_TOKENS = ['I ', 'will ', 'ask ', 'the ', 'researcher.'];
const SUMMARY_TOKENS = ['The ', 'researcher ', 'counted ', 'to ', 'fifty.'];

interface Hold {
  /** Lets the rest of the held reply go. */
  release(): void;
}

/**
 * Streams the first half of each reply, then holds the response open until the test has seen what it
 * waits for (`release`), so the order of deltas and reply never depends on time. A hold nobody releases
 * lets go after a while, so a broken feature fails its assertions instead of hanging.
 */
class TokenServer {
  #server: { close(): Promise<void> } | undefined;
  #holds: Promise<void>[] = [];
  baseURL = '';

  async start(): Promise<void> {
    const server = await listenLocally((body, response) => void this.#reply(body, response));
    this.#server = server;
    this.baseURL = server.baseURL;
  }

  hold(): Hold {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const fallback = setTimeout(release, 30_000);
    this.#holds.push(held.finally(() => clearTimeout(fallback)));
    return { release };
  }

  async #reply(body: string, response: ServerResponse): Promise<void> {
    const request = JSON.parse(body) as { messages: { role: string; content: string }[]; tools?: { function: { name: string } }[] };
    const messages = request.messages;
    const asked = (word: string) => messages.some((m) => m.role === 'user' && m.content.includes(word));
    const answered = messages.some((m) => m.role === 'tool');
    // The lead delegates the count, then sums up what the researcher said.
    const lead = request.tools?.some((tool) => tool.function.name === 'delegate_to_researcher') === true && asked('researcher');
    // Asked to look something up, it first says so and calls the tool; with the result it answers.
    const first = asked('look') && !answered;
    const pieces = lead ? (answered ? SUMMARY_TOKENS : DELEGATING_TOKENS) : first ? LOOKUP_TOKENS : asked('key') ? KEY_TOKENS : TOKENS;
    const toolCalls = lead && !answered ? [{ id: 'd1', name: 'delegate_to_researcher', argumentPieces: ['{"task":', '"Count to fifty."}'] }] : first ? [{ id: 'l1', name: 'lookup', argumentPieces: ['{"q":', '"fifty"}'] }] : [];
    const chunks = chunksFor({ textPieces: pieces, toolCalls, usage: { prompt_tokens: 10, completion_tokens: pieces.length, total_tokens: 10 + pieces.length } });
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    // The role chunk and the first half of the text, then the hold, then the rest.
    const half = 1 + Math.ceil(pieces.length / 2);
    for (const chunk of chunks.slice(0, half)) response.write(sseBytes([chunk], { done: false }));
    await (this.#holds.shift() ?? Promise.resolve());
    for (const chunk of chunks.slice(half)) response.write(sseBytes([chunk], { done: false }));
    response.end('data: [DONE]\n\n');
  }

  close(): Promise<void> {
    return this.#server?.close() ?? Promise.resolve();
  }
}

const of = (events: readonly SseEvent[], type: string) => events.filter((e) => e.data.type === type);

interface UiPart {
  readonly type: string;
  readonly delta?: string;
}

/** The parts of an AI SDK UI message stream, each given to `seen` as it arrives. */
async function uiMessageParts(response: Response, seen: (part: UiPart) => unknown): Promise<UiPart[]> {
  const parts: UiPart[] = [];
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of response.body as ReadableStream<Uint8Array>) {
    text += decoder.decode(chunk, { stream: true });
    const frames = text.split('\n\n');
    text = frames.pop() ?? '';
    for (const frame of frames) {
      const data = frame.split('\n').find((line) => line.startsWith('data: '))?.slice(6);
      if (data === undefined || data === '[DONE]') continue;
      const part = JSON.parse(data) as UiPart;
      parts.push(part);
      seen(part);
    }
  }
  return parts;
}

describe.skipIf(missing !== '')('token streaming from a durable worker in another process', () => {
  const server = new TokenServer();
  let url = '';
  let worker: ChildProcess | undefined;
  let runtime: PostgresRuntime;
  let agent: Agent;
  let system: AgentSystem;
  /** Every token notice this database carries, as a page's server would hear it. */
  let listener: pg.Client | undefined;
  const notices: { readonly r: string; readonly p: number; readonly t?: string; readonly h?: string; readonly bytes: number }[] = [];
  const served: Served[] = [];
  /** Backends holding (or, with `granted` false, waiting for) the advisory lock `lock` of the agent. */
  const locks = async (lock: number, agentId: string, granted = true) =>
    Number(
      (
        await engineOf(runtime).pool.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND classid = $1::int4::oid AND objid = hashtext($2)::oid AND granted = $3`,
          [lock, agentId, granted],
        )
      ).rows[0]?.n,
    );
  const until = async (condition: () => Promise<boolean> | boolean): Promise<void> => {
    while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  let marks = 0;
  /** Notices arrive in commit order: once one sent now is here, every one committed before it is too. */
  const noticesUpToNow = async (): Promise<void> => {
    const mark = `mark-${marks++}`;
    await engineOf(runtime).pool.query(`SELECT pg_notify('actorloop_tokens', $1)`, [JSON.stringify({ r: mark })]);
    while (!notices.some((n) => n.r === mark)) await new Promise((resolve) => setTimeout(resolve, 20));
  };

  beforeAll(async () => {
    await server.start();
    url = await freshDatabase('tokens');
    runtime = createPostgresRuntime({ connectionString: url, migrate: true, poolSize: 4 });
    await runtime.migrate();
    agent = streamingAgent(runtime, server.baseURL);
    system = streamingSystem(runtime, server.baseURL);
    listener = new pg.Client({ connectionString: url });
    await listener.connect();
    listener.on('notification', (message) => {
      const payload = message.payload ?? '{}';
      notices.push({ ...(JSON.parse(payload) as { r: string; p: number }), bytes: Buffer.byteLength(payload) });
    });
    await listener.query('LISTEN actorloop_tokens');
    worker = await startWorker(url, { streamBaseURL: server.baseURL, concurrency: 2 });
  }, 60_000);
  afterAll(async () => {
    if (worker !== undefined) await stop(worker);
    await Promise.all(served.map((s) => s.close()));
    await listener?.end();
    system?.stopAll();
    await runtime?.close();
    await server.close();
  });

  it("this process's tokens$ gets the worker's deltas before the run's reply entry, and they join to the answer", { timeout: 90_000 }, async () => {
    const runId = 'run-tokens-order';
    const hold = server.hold();
    const deltas: string[] = [];
    const order: string[] = [];
    const tokens = agent.tokens$.subscribe(({ runId: id, delta }) => {
      if (id !== runId) return;
      deltas.push(delta);
      order.push('delta');
      hold.release();
    });
    const events = agent.events$.subscribe((entry) => {
      if (entry.runId === runId && entry.event.type === 'reasoning.completed') order.push('reply');
    });
    try {
      const result = await agent.start('Count to fifty.', { runId }).result;
      expect(result.text).toBe(ANSWER);
    } finally {
      tokens.unsubscribe();
      events.unsubscribe();
    }
    // The first half came while the server held the rest: at least two notices' worth.
    expect(deltas.length).toBeGreaterThanOrEqual(2);
    expect(deltas.join('')).toBe(ANSWER);
    expect(order).toEqual([...deltas.map(() => 'delta'), 'reply']);
    // Coalesced: far fewer notices than the fifty tokens the model sent, and still one model call in the run's effects.
    const published = notices.filter((n) => n.r === runId);
    expect(published.length).toBeGreaterThanOrEqual(2);
    expect(published.length).toBeLessThanOrEqual(10);
    const effects = new pg.Client({ connectionString: url });
    await effects.connect();
    try {
      const rows = await effects.query<{ kind: string }>('SELECT kind FROM actorloop.effects WHERE actor_id = $1', [runId]);
      expect(rows.rows).toEqual([{ kind: 'model' }]);
    } finally {
      await effects.end();
    }
  });

  it('the AG-UI handler on the durable agent streams the text while the worker generates, and the reply adds none of it again', { timeout: 90_000 }, async () => {
    const handler = await serve(createAgUiHandler(agent, { runtime, pollIntervalMs: 100 }));
    served.push(handler);
    const hold = server.hold();
    const reader = new EventReader(await post(handler.url, runInput('Count to fifty.', 'run-tokens-agui')));
    await reader.until((e) => e.data.type === 'TEXT_MESSAGE_CONTENT');
    hold.release();
    const events = await reader.rest();
    const contents = of(events, 'TEXT_MESSAGE_CONTENT');
    expect(contents.length).toBeGreaterThanOrEqual(2);
    const end = events.findIndex((e) => e.data.type === 'TEXT_MESSAGE_END');
    expect(events.indexOf(contents.at(-1) as SseEvent)).toBeLessThan(end);
    expect(contents.map((e) => e.data.delta).join('')).toBe(ANSWER);
    expect(of(events, 'TEXT_MESSAGE_START')).toHaveLength(1);
    expect(events.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', result: { text: ANSWER } });
  });

  it('a follower that joins mid-call shows the call live from its start: the text so far at once, then the rest, none of it twice', { timeout: 90_000 }, async () => {
    const handler = await serve(createAgUiHandler(agent, { runtime, pollIntervalMs: 100 }));
    served.push(handler);
    const runId = 'run-tokens-late';
    const hold = server.hold();
    const first = new EventReader(await post(handler.url, runInput('Count to fifty.', runId)));
    // The server sent the first half and holds the rest; the first page has all of it.
    const text = (reader: EventReader) => of(reader.events, 'TEXT_MESSAGE_CONTENT').map((e) => e.data.delta).join('');
    await first.whilst(() => text(first).length < FIRST_HALF.length);
    expect(text(first)).toBe(FIRST_HALF);
    // Joins while the worker is halfway through the reply: a page's stream, and a subscriber in code.
    const late = new EventReader(await fetch(`${handler.url}/runs/${runId}/stream`));
    const lateTokens: string[] = [];
    const tokens = agent.tokens$.subscribe(({ runId: id, delta }) => id === runId && lateTokens.push(delta));
    expect(lateTokens.join('')).toBe(FIRST_HALF);
    // The text so far reaches the late page before the server lets the rest go.
    await late.whilst(() => text(late).length < FIRST_HALF.length);
    expect(text(late)).toBe(FIRST_HALF);
    let ended!: () => void;
    const end = new Promise<void>((resolve) => (ended = resolve));
    const events = agent.events$.subscribe((entry) => entry.runId === runId && entry.event.type === 'run.terminated' && ended());
    hold.release();
    const [early, joined] = await Promise.all([first.rest(), late.rest(), end]).finally(() => (tokens.unsubscribe(), events.unsubscribe()));
    expect(of(early, 'TEXT_MESSAGE_CONTENT').map((e) => e.data.delta).join('')).toBe(ANSWER);
    // The late page had the call live, the first half then the rest, each once; the reply added nothing.
    const lateContents = of(joined, 'TEXT_MESSAGE_CONTENT');
    expect(lateContents.length).toBeGreaterThanOrEqual(2);
    expect(lateContents.map((e) => e.data.delta).join('')).toBe(ANSWER);
    // Live: each id is the committed cursor and the characters of the message the page has with it.
    let had = 0;
    expect(lateContents.map((e) => e.id)).toEqual(lateContents.map((e) => `${(e.id ?? '').split('.').slice(0, 2).join('.')}.t${(had += (e.data.delta as string).length)}`));
    expect(of(joined, 'TEXT_MESSAGE_START')).toHaveLength(1);
    expect(lateTokens.join('')).toBe(ANSWER);
    // The run ended: a subscriber now gets none of its text again.
    const after: string[] = [];
    agent.tokens$.subscribe(({ runId: id, delta }) => id === runId && after.push(delta)).unsubscribe();
    expect(after).toEqual([]);
  });

  it('a process that starts following mid-call gets the call so far from the worker at once and the rest live, before its reply, none of it twice', { timeout: 90_000 }, async () => {
    const runId = 'run-tokens-joiner';
    const hold = server.hold();
    const firstTokens: string[] = [];
    const tokens = agent.tokens$.subscribe(({ runId: id, delta }) => id === runId && firstTokens.push(delta));
    const followers = () => locks(TOKEN_LOCK, 'streamer');
    // Another process: its own runtime and listening connection.
    const other = createPostgresRuntime({ connectionString: url, poolSize: 2 });
    const order: string[] = [];
    const lateTokens: string[] = [];
    const subscriptions: { unsubscribe(): void }[] = [tokens];
    try {
      const run = agent.start('Count to fifty.', { runId });
      while (firstTokens.join('').length < FIRST_HALF.length) await new Promise((resolve) => setTimeout(resolve, 20));
      // It follows the agent once the first half is out, and holds the agent's lock before the server goes on.
      const before = await followers();
      const joiner = streamingAgent(other, server.baseURL);
      subscriptions.push(
        joiner.tokens$.subscribe(({ runId: id, delta }) => id === runId && (lateTokens.push(delta), order.push('delta'))),
        joiner.events$.subscribe((entry) => entry.runId === runId && entry.event.type === 'reasoning.completed' && order.push('reply')),
      );
      while ((await followers()) === before) await new Promise((resolve) => setTimeout(resolve, 20));
      hold.release();
      expect((await run.result).text).toBe(ANSWER);
      while (!order.includes('reply')) await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      for (const subscription of subscriptions) subscription.unsubscribe();
      await other.close();
    }
    expect(firstTokens.join('')).toBe(ANSWER);
    expect(lateTokens.join('')).toBe(ANSWER);
    expect(order).toEqual([...lateTokens.map(() => 'delta'), 'reply']);
  });

  it("a call's deltas never overtake the reply before it while the page's server is still reading that reply", { timeout: 90_000 }, async () => {
    const runId = 'run-tokens-two-calls';
    // The reads that follow the run are held until the worker has published the second call's deltas.
    const calls = () => new Set(notices.filter((n) => n.r === runId).map((n) => (n as { c?: string }).c));
    let stall = false;
    const journal = async (id: string, after?: number) => {
      while (stall && calls().size < 2) await new Promise((resolve) => setTimeout(resolve, 20));
      return runtime.journal(id, after === undefined ? {} : { after });
    };
    const handler = await serve(createAgUiHandler(agent, { runtime, journal, pollIntervalMs: 100 }));
    served.push(handler);
    // The first call is held halfway until the reads stall, so the reply they hold back is that call's; the second
    // until the page shows some of it, so its deltas are live (not yet past its reply) when the read lets them go.
    const holds = [server.hold(), server.hold()];
    const reader = new EventReader(await post(handler.url, runInput('Count to fifty, but look it up first.', runId)));
    await reader.until((e) => e.data.type === 'TEXT_MESSAGE_CONTENT');
    const lookup = reader.events.find((e) => e.data.type === 'TEXT_MESSAGE_START')?.data.messageId;
    stall = true;
    holds[0]?.release();
    await reader.until((e) => e.data.type === 'TEXT_MESSAGE_CONTENT' && e.data.messageId !== lookup);
    holds[1]?.release();
    const events = await reader.rest();
    expect(calls().size).toBe(2);
    // Two messages, each its own call's text: the lookup's announcement, then the answer.
    const starts = of(events, 'TEXT_MESSAGE_START').map((e) => e.data.messageId);
    expect(starts).toHaveLength(2);
    const contents = (id: unknown) => of(events, 'TEXT_MESSAGE_CONTENT').filter((e) => e.data.messageId === id);
    expect(starts.map((id) => contents(id).map((e) => e.data.delta).join(''))).toEqual([LOOKUP_TOKENS.join(''), ANSWER]);
    // The answer came live (its id marks the characters of a live message: a committed event's has none), and only
    // after the lookup's reply: its message and its tool call ended.
    expect(contents(starts[1])[0]?.id).toMatch(/^\d+\.\d+\.t\d+$/);
    const at = (type: string, id?: unknown) => events.findIndex((e) => e.data.type === type && (id === undefined || e.data.messageId === id || e.data.toolCallId === id));
    const answer = at('TEXT_MESSAGE_START', starts[1]);
    expect(at('TEXT_MESSAGE_END', starts[0])).toBeLessThan(answer);
    expect(at('TOOL_CALL_END', 'l1')).toBeLessThan(answer);
    // The lookup's result is committed with the step that asks for the answer, so the page has it before the answer's text.
    expect(at('TOOL_CALL_RESULT')).toBeLessThan(answer);
    expect(events.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', result: { text: ANSWER } });
  });

  it("the AG-UI handler shows a durable run's tool result before the next call's first delta, as the journal orders them", { timeout: 90_000 }, async () => {
    const runId = 'run-tokens-result-first';
    const handler = await serve(createAgUiHandler(agent, { runtime, pollIntervalMs: 100 }));
    served.push(handler);
    // Each reply held halfway: the second until the page has been looked at while that call streams.
    const holds = [server.hold(), server.hold()];
    const reader = new EventReader(await post(handler.url, runInput('Count to fifty, but look it up first.', runId)));
    await reader.until((e) => e.data.type === 'TEXT_MESSAGE_CONTENT');
    const lookup = reader.events.find((e) => e.data.type === 'TEXT_MESSAGE_START')?.data.messageId;
    holds[0]?.release();
    await reader.until((e) => e.data.type === 'TEXT_MESSAGE_CONTENT' && e.data.messageId !== lookup);
    const at = (match: (e: SseEvent) => boolean) => reader.events.findIndex(match);
    const answerAt = at((e) => e.data.type === 'TEXT_MESSAGE_CONTENT' && e.data.messageId !== lookup);
    const resultAt = at((e) => e.data.type === 'TOOL_CALL_RESULT' && e.data.toolCallId === 'l1');
    holds[1]?.release();
    const events = await reader.rest();
    // Live: the answer's first delta came while the server held the rest of it.
    expect(reader.events[answerAt]?.id).toMatch(/^\d+\.\d+\.t\d+$/);
    expect(resultAt).toBeGreaterThanOrEqual(0);
    expect(resultAt).toBeLessThan(answerAt);
    expect(of(events, 'TOOL_CALL_RESULT')).toHaveLength(1);
    expect(events.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', result: { text: ANSWER } });
    // The journal has the result before the answer's reply, as the page had them.
    const journal = await runtime.journal(runId);
    const observed = journal.findIndex((entry) => entry.event.type === 'observations.collected');
    const replies = journal.flatMap((entry, i) => (entry.event.type === 'reasoning.completed' ? [i] : []));
    expect(replies).toHaveLength(2);
    expect(observed).toBeGreaterThan(replies[0] as number);
    expect(observed).toBeLessThan(replies[1] as number);
  });

  it("the AI SDK handler shows a durable run's tool output before the next call's first text delta", { timeout: 90_000 }, async () => {
    const handler = await serve(createAiSdkHandler(agent, { runtime, pollIntervalMs: 100 }));
    served.push(handler);
    const holds = [server.hold(), server.hold()];
    const body = { id: 'chat-tokens-result-first', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Count to fifty, but look it up first.' }] }], trigger: 'submit-message' };
    const seen: UiPart[] = [];
    let firstText: string | undefined;
    let outputBeforeAnswer: boolean | undefined;
    const parts = await uiMessageParts(await post(handler.url, body), (part) => {
      seen.push(part);
      const id = (part as { id?: string }).id;
      if (part.type !== 'text-delta') return;
      firstText ??= id;
      if (id === firstText) holds[0]?.release();
      else if (outputBeforeAnswer === undefined) {
        // The answer's first delta, while the server holds the rest of it.
        outputBeforeAnswer = seen.some((p) => p.type === 'tool-output-available');
        holds[1]?.release();
      }
    });
    expect(outputBeforeAnswer).toBe(true);
    expect(parts.filter((part) => part.type === 'tool-output-available')).toHaveLength(1);
    const texts = parts.filter((part) => part.type === 'text-delta' && (part as { id?: string }).id !== firstText);
    expect(texts.map((part) => part.delta).join('')).toBe(ANSWER);
  });

  it('the AI SDK handler on the durable agent streams text-delta parts while the worker generates, the reply adding none', { timeout: 90_000 }, async () => {
    const handler = await serve(createAiSdkHandler(agent, { runtime, pollIntervalMs: 100 }));
    served.push(handler);
    const hold = server.hold();
    const body = { id: 'chat-tokens', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Count to fifty.' }] }], trigger: 'submit-message' };
    const parts = await uiMessageParts(await post(handler.url, body), (part) => part.type === 'text-delta' && hold.release());
    const deltas = parts.filter((part) => part.type === 'text-delta');
    expect(deltas.length).toBeGreaterThanOrEqual(2);
    expect(parts.indexOf(deltas.at(-1) as UiPart)).toBeLessThan(parts.findIndex((part) => part.type === 'text-end'));
    expect(deltas.map((part) => part.delta).join('')).toBe(ANSWER);
    expect(parts.filter((part) => part.type === 'text-start')).toHaveLength(1);
  });

  it("a page's run on an agent nobody here followed yet is queued only once this process follows it, so its first call streams live", { timeout: 90_000 }, async () => {
    const runId = 'run-tokens-newcomer';
    const newcomer = streamingAgent(runtime, server.baseURL, 'newcomer');
    const handler = await serve(createAgUiHandler(newcomer, { runtime, pollIntervalMs: 100 }));
    served.push(handler);
    // This process listens already, as one that served a page before does: it followed another agent.
    const before = agent.events$.subscribe();
    await until(async () => (await locks(TOKEN_LOCK, 'streamer')) > 0).finally(() => before.unsubscribe());
    // The follow's shared lock waits behind this one, as it would behind a slow listening connection.
    const gate = new pg.Client({ connectionString: url });
    await gate.connect();
    await gate.query('SELECT pg_advisory_lock($1, hashtext($2))', [FOLLOW_LOCK, 'newcomer']);
    let gated = true;
    const hold = server.hold();
    try {
      const reader = new EventReader(await post(handler.url, runInput('Count to fifty.', runId)));
      await until(async () => (await locks(FOLLOW_LOCK, 'newcomer', false)) > 0);
      // While the follow waits the run is not queued: a worker that got to the call would find nobody following and publish none of it.
      for (let polls = 0; polls < 50 && (await runtime.getRun(runId)) === null; polls++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await runtime.getRun(runId)).toBeNull();
      await gate.query('SELECT pg_advisory_unlock($1, hashtext($2))', [FOLLOW_LOCK, 'newcomer']);
      gated = false;
      // Live: the first half reaches the page while the server holds the rest.
      await reader.until((e) => e.data.type === 'TEXT_MESSAGE_CONTENT');
      hold.release();
      const events = await reader.rest();
      const contents = of(events, 'TEXT_MESSAGE_CONTENT');
      expect(contents.length).toBeGreaterThanOrEqual(2);
      expect(contents.map((e) => e.data.delta).join('')).toBe(ANSWER);
      expect(notices.filter((n) => n.r === runId).length).toBeGreaterThan(0);
    } finally {
      hold.release();
      if (gated) await gate.query('SELECT pg_advisory_unlock($1, hashtext($2))', [FOLLOW_LOCK, 'newcomer']);
      await gate.end();
    }
  });

  it("the AG-UI handler serving a durable system member streams the worker's deltas through the tree stream, the text whole and the run's own", { timeout: 90_000 }, async () => {
    const lead = system.get('lead').agent;
    const handler = await serve(createAgUiHandler(lead, { runtime, system, pollIntervalMs: 100 }));
    served.push(handler);
    const hold = server.hold();
    const reader = new EventReader(await post(handler.url, runInput('Count to fifty.', 'run-tokens-tree')));
    await reader.until((e) => e.data.type === 'TEXT_MESSAGE_CONTENT');
    hold.release();
    const events = await reader.rest();
    const contents = of(events, 'TEXT_MESSAGE_CONTENT');
    // Live: the first half came while the server held the rest, so in more than one event, all before the message ended.
    expect(contents.length).toBeGreaterThanOrEqual(2);
    expect(events.indexOf(contents.at(-1) as SseEvent)).toBeLessThan(events.findIndex((e) => e.data.type === 'TEXT_MESSAGE_END'));
    expect(contents.map((e) => e.data.delta).join('')).toBe(ANSWER);
    expect(of(events, 'TEXT_MESSAGE_START')).toHaveLength(1);
    // The lead's own: no event names a sub-run, and the live ones' ids say how much of the message the page has (a reconnect goes on from there).
    expect(events.filter((e) => e.data.subagentRunId !== undefined)).toEqual([]);
    const had = contents.map((_, index) => contents.slice(0, index + 1).reduce((sum, e) => sum + (e.data.delta as string).length, 0));
    expect(contents.map((e) => /\.t(\d+)$/.exec(e.id ?? '')?.[1])).toEqual(had.map(String));
    expect(events.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', result: { text: ANSWER } });
  });

  it("the tree stream of a durable lead that delegates: its calls live, the researcher's run under its own id with its text whole, each event from its agent", { timeout: 90_000 }, async () => {
    const handler = await serve(createAgUiHandler(system.get('lead').agent, { runtime, system, pollIntervalMs: 100 }));
    served.push(handler);
    // The lead's first call, the researcher's, the lead's last: each held halfway until its text is seen.
    const holds = [server.hold(), server.hold(), server.hold()];
    const researcherDeltas: string[] = [];
    const researching = system.get('researcher').agent.tokens$.subscribe(({ delta }) => (researcherDeltas.push(delta), holds[1]?.release()));
    const reader = new EventReader(await post(handler.url, runInput('Ask the researcher to count to fifty.', 'run-tokens-delegates')));
    // Some text of the `index`th message of a run (the lead's events name no sub-run).
    const content = (from: string | undefined, index: number) => (e: SseEvent) =>
      e.data.type === 'TEXT_MESSAGE_CONTENT' && e.data.messageId === of(reader.events, 'TEXT_MESSAGE_START').filter((start) => start.data.subagentRunId === from)[index]?.data.messageId;
    try {
      await reader.until(content(undefined, 0));
      holds[0]?.release();
      await reader.until(content(undefined, 1));
      holds[2]?.release();
    } finally {
      researching.unsubscribe();
    }
    const events = await reader.rest();
    const started = of(events, 'SUBAGENT_STARTED');
    expect(started.map((e) => e.data.name)).toEqual(['researcher']);
    const researcherRun = started[0]?.data.subagentRunId as string;
    expect(await runtime.getRun(researcherRun)).toMatchObject({ agentId: 'researcher', status: 'done' });
    // This process had the researcher's call live (its worker published it), the page the run whole once it was delegated.
    expect(researcherDeltas.join('')).toBe(ANSWER);
    const messages = of(events, 'TEXT_MESSAGE_START').map((e) => ({ id: e.data.messageId, from: e.data.subagentRunId }));
    const contents = (id: unknown) => of(events, 'TEXT_MESSAGE_CONTENT').filter((e) => e.data.messageId === id);
    // Runs interleave as their events arrive: each run's messages in order, whatever came between them.
    const texts = (from: string | undefined) => messages.filter((m) => m.from === from).map(({ id }) => contents(id).map((e) => e.data.delta).join(''));
    expect(texts(undefined)).toEqual([DELEGATING_TOKENS.join(''), SUMMARY_TOKENS.join('')]);
    expect(texts(researcherRun)).toEqual([ANSWER]);
    expect(messages).toHaveLength(3);
    for (const { id, from } of messages) expect(contents(id).every((e) => e.data.subagentRunId === from)).toBe(true);
    // The lead's own calls came live: in more than one event each.
    expect(messages.filter(({ from }) => from === undefined).map(({ id }) => contents(id).length >= 2)).toEqual([true, true]);
    expect(events.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', result: { text: SUMMARY_TOKENS.join('') } });
  });

  it("a long delta is split between notices under PostgreSQL's payload limit and joins back whole", { timeout: 60_000 }, async () => {
    const runId = 'run-tokens-long';
    // Multi-byte letters, an emoji, and characters JSON escapes: each piece's bytes are counted as sent.
    const long = Array.from({ length: 3_000 }, (_, i) => `é🌤\n"${i}\u0001 `).join('');
    // Published only to a following process: this one, from when it holds the agent's token lock.
    const following = agent.events$.subscribe();
    try {
      await until(async () => (await locks(TOKEN_LOCK, 'streamer')) > 0);
      const publisher = new TokenPublisher(engineOf(runtime).pool, { agentId: 'streamer', runId, call: `${runId}:model:1:0` }, () => createRedactor().stream());
      publisher.text(long);
      await publisher.end();
    } finally {
      following.unsubscribe();
    }
    await noticesUpToNow();
    const published = notices.filter((n) => n.r === runId);
    expect(published.length).toBeGreaterThanOrEqual(4);
    expect(Math.max(...published.map((n) => n.bytes))).toBeLessThan(8_000);
    expect(published.map((n) => n.p)).toEqual(published.map((_, i) => i));
    expect(published.map((n) => n.t).join('')).toBe(long);
  });

  it('a worker publishes nothing for an agent no process follows, and its run still answers', { timeout: 90_000 }, async () => {
    const runId = 'run-tokens-unfollowed';
    // Defined here as in the worker, its runs run and awaited, its events never subscribed to.
    const unfollowed = streamingAgent(runtime, server.baseURL, 'unfollowed');
    expect((await unfollowed.run('Count to fifty.', { runId })).text).toBe(ANSWER);
    await noticesUpToNow();
    expect(notices.filter((n) => n.r === runId)).toEqual([]);
  });

  it('a delta that carries a configured secret is redacted before it leaves the worker', { timeout: 90_000 }, async () => {
    const runId = 'run-tokens-secret';
    const hold = server.hold();
    const deltas: string[] = [];
    const tokens = agent.tokens$.subscribe(({ runId: id, delta }) => {
      if (id !== runId) return;
      deltas.push(delta);
      hold.release();
    });
    try {
      await agent.start('Tell me the key.', { runId }).result;
    } finally {
      tokens.unsubscribe();
    }
    const text = deltas.join('');
    expect(deltas.length).toBeGreaterThanOrEqual(2);
    expect(text).toContain('[REDACTED]');
    expect(text).not.toContain(STREAM_SECRET);
    // What was streamed is what the journal keeps.
    const journal: JournalEntry[] = await runtime.journal(runId);
    const reply = journal.find((entry) => entry.event.type === 'reasoning.completed')?.event;
    expect(reply).toMatchObject({ text });
    // Nowhere on the wire either.
    const published = notices.filter((n) => n.r === runId);
    expect(published.length).toBeGreaterThan(0);
    expect(JSON.stringify(published)).not.toContain(STREAM_SECRET.slice(0, 9));
  });
});
