/**
 * Web streaming: a streamed reply read by `agent.tokens$` in process against the same reply read
 * over real HTTP on 127.0.0.1 through the AG-UI and AI SDK handlers (Node http via
 * `toNodeListener`, server and client in this process), and through the AG-UI handler called in
 * process without HTTP, and through `tokens$` written out by hand as SSE on the same kind of server
 * (what a page needs without the handler); then many streamed runs at once through the AG-UI handler.
 * Every run's text is reassembled and compared with what the model sent.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAgent, type Agent } from '../src/index.ts';
import { scriptedModel } from '../src/testing/index.ts';
import { createAgUiHandler, createAiSdkHandler, toNodeListener } from '../src/web/index.ts';
import { summarize, type Summary } from './stats.ts';

export interface WebOptions {
  /** Tokens in the reply of the per-token rows. */
  readonly tokens: number;
  /** Runs of each way of reading, after `warmupRuns`, interleaved round by round. */
  readonly runs: number;
  readonly warmupRuns: number;
  /** Runs started at once through the AG-UI handler, and tokens in each reply. */
  readonly concurrentRuns: number;
  readonly concurrentTokens: number;
  /**
   * The two costs apart: one-token runs (a request's fixed cost), and runs of these two lengths
   * whose medians' slope is the cost of one more token; `runs` of each, interleaved like the rest.
   */
  readonly slopeTokens: readonly [number, number];
}

type Way = 'direct' | 'agUi' | 'agUiInProcess' | 'aiSdk' | 'transport' | 'byHand';
const WAYS: readonly Way[] = ['direct', 'agUi', 'agUiInProcess', 'aiSdk', 'transport', 'byHand'];

export interface WebResult {
  readonly tokens: number;
  /** µs per token, one sample per run. */
  readonly directUs: Summary;
  readonly agUiUs: Summary;
  /** The AG-UI handler called in process, its Response body read directly: the handler without HTTP. */
  readonly agUiInProcessUs: Summary;
  readonly aiSdkUs: Summary;
  /** Node http answering each POST with a recorded AG-UI stream of as many tokens, read like the rest: the transport alone, no agent or handler. */
  readonly transportUs: Summary;
  /** `tokens$` written by hand as AG-UI SSE events on Node http, one event a token, read like the rest: what a page needs without the handler. */
  readonly byHandUs: Summary;
  /** Text events a run's stream carried (the deltas that waited for the reader are joined into one), one sample per run. */
  readonly textEvents: { readonly agUi: Summary; readonly agUiInProcess: Summary; readonly aiSdk: Summary; readonly transport: Summary; readonly byHand: Summary };
  /** ms per one-token run: what a request costs before any token. */
  readonly fixedMs: Readonly<Record<Way, Summary>>;
  /** µs per token between runs of `slopeTokens[0]` and `slopeTokens[1]` tokens (the slope of the medians). */
  readonly marginal: { readonly tokens: readonly [number, number]; readonly usPerToken: Readonly<Record<Way, number>> };
  readonly concurrent: {
    readonly runs: number;
    readonly tokensPerRun: number;
    readonly wallMs: number;
    readonly runsPerSecond: number;
    readonly tokensPerSecond: number;
    /** RSS when the runs start, after a GC when the process has `--expose-gc`. */
    readonly rssBeforeMb: number;
    /** The highest RSS sampled during the runs (every 10 ms and at the end). */
    readonly peakRssMb: number;
  };
}

/** The reply the model streams for a task: `tokens` pieces that name the task, so a mixed-up stream shows. */
const piecesFor = (task: string, tokens: number) => Array.from({ length: tokens }, (_, i) => `${task}.${i} `);

export function streamingAgent(tokens: number): Agent {
  const model = scriptedModel((request) => {
    const task = request.messages.findLast((m) => m.role === 'user')?.content;
    if (typeof task !== 'string') throw new Error('web bench: the request has no user task');
    const chunks = piecesFor(task, tokens);
    return { text: chunks.join(''), chunks };
  });
  return createAgent({ model: { provider: model, stream: true } });
}

/** The reply as `tokens$` carries it; resolves when the run has ended. */
export async function readDirect(agent: Agent, task: string, runId: string): Promise<{ text: string; deltas: number }> {
  const pieces: string[] = [];
  // Subscribed before the run starts, so no token can come before the reader.
  const subscription = agent.tokens$.subscribe((token) => {
    if (token.runId === runId) pieces.push(token.delta);
  });
  try {
    await agent.start(task, { runId }).result;
  } finally {
    subscription.unsubscribe();
  }
  return { text: pieces.join(''), deltas: pieces.length };
}

type Protocol = 'agUi' | 'aiSdk';

const bodyFor = (protocol: Protocol, task: string, id: string) =>
  protocol === 'agUi'
    ? { threadId: `t-${id}`, runId: id, messages: [{ id: 'u1', role: 'user', content: task }], tools: [], context: [], state: {}, forwardedProps: {} }
    : { id, messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: task }] }] };

/**
 * POST a run and read its SSE stream to the end with a plain reader: the text deltas joined, and
 * whether the run finished. `send` is `fetch`, or the handler itself to leave HTTP out.
 */
export async function readStream(send: (request: Request) => Promise<Response>, url: string, protocol: Protocol, task: string, id: string): Promise<{ text: string; deltas: number; finished: boolean }> {
  const request = new Request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(bodyFor(protocol, task, id)) });
  const response = await send(request);
  if (!response.ok || response.body === null) throw new Error(`web bench: ${protocol} answered ${response.status} ${await response.text()}`);
  const [deltaType, endType] = protocol === 'agUi' ? ['TEXT_MESSAGE_CONTENT', 'RUN_FINISHED'] : ['text-delta', 'finish'];
  const decoder = new TextDecoder();
  const pieces: string[] = [];
  let finished = false;
  let buffered = '';
  const take = (block: string) => {
    for (const line of block.split('\n')) {
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      const event = JSON.parse(line.slice(6)) as { type: string; delta?: string };
      if (event.type === deltaType) pieces.push(event.delta ?? '');
      else if (event.type === endType) finished = true;
    }
  };
  for await (const chunk of response.body) {
    buffered += decoder.decode(chunk, { stream: true });
    const cut = buffered.lastIndexOf('\n\n');
    if (cut < 0) continue;
    take(buffered.slice(0, cut));
    buffered = buffered.slice(cut + 2);
  }
  take(buffered + decoder.decode());
  return { text: pieces.join(''), deltas: pieces.length, finished };
}

/**
 * Fail loudly when a run's reassembled text is not exactly what the model streamed. `tokens$`
 * carries every delta; a stream may join deltas that waited for its reader, never split one.
 */
function check(what: string, task: string, tokens: number, got: { text: string; deltas: number; finished?: boolean }, joined: boolean): void {
  const expected = piecesFor(task, tokens);
  const deltasOk = joined ? got.deltas >= 1 && got.deltas <= tokens : got.deltas === tokens;
  if (got.finished === false || !deltasOk || got.text !== expected.join('')) {
    throw new Error(`web bench: ${what} for "${task}" got ${got.deltas} deltas for ${tokens} tokens${got.finished === false ? ', no end event' : ''}, text ${got.text === expected.join('') ? 'exact' : 'wrong'}`);
  }
}

export async function listen(server: Server): Promise<string> {
  // A backlog above Node's default 511 so a thousand connections at once are not refused and retried.
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/agent`;
}

export function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * What a user writes without the handler: the run's `tokens$` as AG-UI SSE events on a Node response,
 * each token written as it comes, no ids, no reconnect, no joining for a slow reader.
 */
export function byHandListener(agent: Agent): RequestListener {
  return (request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const input = JSON.parse(body) as { threadId: string; runId: string; messages: { content: string }[] };
      const { threadId, runId } = input;
      const messageId = `${runId}:text`;
      const send = (event: object) => response.write(`data: ${JSON.stringify(event)}\n\n`);
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      send({ type: 'RUN_STARTED', threadId, runId });
      send({ type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' });
      const subscription = agent.tokens$.subscribe((token) => {
        if (token.runId === runId) send({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta: token.delta });
      });
      agent.start(input.messages.at(-1)?.content ?? '', { runId }).result.then(
        () => {
          subscription.unsubscribe();
          send({ type: 'TEXT_MESSAGE_END', messageId });
          send({ type: 'RUN_FINISHED', threadId, runId });
          response.end();
        },
        (error: unknown) => {
          subscription.unsubscribe();
          send({ type: 'RUN_ERROR', message: String(error) });
          response.end();
        },
      );
    });
  };
}

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

/** ms per run and text events per run of each way, `tokens`-token runs interleaved round by round. */
async function measureWays(tokens: number, runs: number, warmupRuns: number): Promise<Record<Way, { ms: number[]; deltas: number[] }>> {
  const agent = streamingAgent(tokens);
  const agUiHandler = createAgUiHandler(agent);
  const agUi = createServer(toNodeListener(agUiHandler));
  const aiSdk = createServer(toNodeListener(createAiSdkHandler(agent)));
  const recorded = await (await agUiHandler(new Request('http://127.0.0.1/api/agent', { method: 'POST', body: JSON.stringify(bodyFor('agUi', TRANSPORT_TASK, 'recorded')) }))).text();
  const transport = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }).end(recorded));
  });
  const byHand = createServer(byHandListener(agent));
  try {
    const urls = { agUi: await listen(agUi), aiSdk: await listen(aiSdk), transport: await listen(transport), byHand: await listen(byHand) };
    const samples = Object.fromEntries(WAYS.map((way) => [way, { ms: [] as number[], deltas: [] as number[] }])) as Record<Way, { ms: number[]; deltas: number[] }>;
    const read = (way: Way, task: string, id: string) => {
      if (way === 'direct') return readDirect(agent, task, id);
      if (way === 'agUiInProcess') return readStream(agUiHandler, urls.agUi, 'agUi', task, id);
      if (way === 'transport') return readStream(fetch, urls.transport, 'agUi', task, id);
      if (way === 'byHand') return readStream(fetch, urls.byHand, 'agUi', task, id);
      return readStream(fetch, urls[way], way, task, id);
    };
    for (let round = 0; round < warmupRuns + runs; round++) {
      // Rotate which goes first, so none always runs on a warmer process.
      for (let k = 0; k < WAYS.length; k++) {
        const way = WAYS[(round + k) % WAYS.length] as Way;
        // The recorded stream answers one task, whatever the request asks. The others name the way by its
        // index: a task's length is its tokens' length, and every way must carry the same bytes.
        const task = way === 'transport' ? TRANSPORT_TASK : `r${String(round).padStart(3, '0')}w${WAYS.indexOf(way)}`;
        const started = performance.now();
        const got = await read(way, task, `run-${round}-${way}`);
        const ms = performance.now() - started;
        check(way, task, tokens, got, way !== 'direct');
        if (round < warmupRuns) continue;
        samples[way].ms.push(ms);
        samples[way].deltas.push(got.deltas);
      }
    }
    return samples;
  } finally {
    agent.stop();
    await Promise.all([close(agUi), close(aiSdk), close(transport), close(byHand)]);
  }
}

/** As long as the other ways' tasks. */
const TRANSPORT_TASK = 'rtrans';

const byWay = <T>(make: (way: Way) => T): Record<Way, T> => Object.fromEntries(WAYS.map((way) => [way, make(way)])) as Record<Way, T>;

/**
 * @example
 * ```ts
 * const r = await measureWeb({ tokens: 2000, runs: 10, warmupRuns: 3, concurrentRuns: 1000, concurrentTokens: 50, slopeTokens: [500, 4000] });
 * r.agUiUs.median / r.directUs.median;
 * ```
 */
export async function measureWeb(options: WebOptions): Promise<WebResult> {
  const { runs, warmupRuns } = options;
  const main = await measureWays(options.tokens, runs, warmupRuns);
  const perToken = (way: Way) => summarize(main[way].ms.map((ms) => (ms * 1000) / options.tokens));
  const one = await measureWays(1, runs, warmupRuns);
  const [fewer, more] = options.slopeTokens;
  if (!(more > fewer && fewer >= 1)) throw new Error(`web bench: slopeTokens must be two lengths, the second longer, not ${fewer} and ${more}`);
  const short = await measureWays(fewer, runs, warmupRuns);
  const long = await measureWays(more, runs, warmupRuns);
  const slope = (way: Way) => ((summarize(long[way].ms).median - summarize(short[way].ms).median) * 1000) / (more - fewer);
  const concurrent = await measureConcurrent(options.concurrentRuns, options.concurrentTokens);
  return {
    tokens: options.tokens,
    directUs: perToken('direct'),
    agUiUs: perToken('agUi'),
    agUiInProcessUs: perToken('agUiInProcess'),
    aiSdkUs: perToken('aiSdk'),
    transportUs: perToken('transport'),
    byHandUs: perToken('byHand'),
    textEvents: {
      agUi: summarize(main.agUi.deltas),
      agUiInProcess: summarize(main.agUiInProcess.deltas),
      aiSdk: summarize(main.aiSdk.deltas),
      transport: summarize(main.transport.deltas),
      byHand: summarize(main.byHand.deltas),
    },
    fixedMs: byWay((way) => summarize(one[way].ms)),
    marginal: { tokens: [fewer, more], usPerToken: byWay(slope) },
    concurrent,
  };
}

/** `runs` AG-UI runs started at once against a fresh agent and server; every reply checked. */
async function measureConcurrent(runs: number, tokens: number): Promise<WebResult['concurrent']> {
  const agent = streamingAgent(tokens);
  // The handler keeps ended runs for their details; keep them all so none is dropped mid-bench.
  const server = createServer(toNodeListener(createAgUiHandler(agent, { retainRuns: runs })));
  try {
    const url = await listen(server);
    // What the per-token rows left behind is collected first (with --expose-gc, as npm run bench runs).
    globalThis.gc?.();
    const rssBefore = process.memoryUsage.rss();
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: runs }, (_, i) => readStream(fetch, url, 'agUi', `c${i}`, `crun-${i}`)));
    const wallMs = performance.now() - started;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage.rss());
    for (const [i, got] of results.entries()) check('a concurrent AG-UI run', `c${i}`, tokens, got, true);
    return {
      runs,
      tokensPerRun: tokens,
      wallMs,
      runsPerSecond: runs / (wallMs / 1000),
      tokensPerSecond: (runs * tokens) / (wallMs / 1000),
      rssBeforeMb: mb(rssBefore),
      peakRssMb: mb(peak),
    };
  } finally {
    agent.stop();
    await close(server);
  }
}
