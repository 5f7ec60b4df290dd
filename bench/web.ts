/**
 * Web streaming: a streamed reply read by `agent.tokens$` in process against the same reply read
 * over real HTTP on 127.0.0.1 through the AG-UI and AI SDK handlers (Node http via
 * `toNodeListener`, server and client in this process), and through the AG-UI handler called in
 * process without HTTP, and through `tokens$` written out by hand as SSE on the same kind of server
 * (what a page needs without the handler); the server's CPU per run of these ways with the page in a
 * process of its own (bench/webProcess.ts); then many streamed runs at once through the AG-UI handler.
 * Every run's text is reassembled and compared with what the model sent.
 */
import { createServer } from 'node:http';
import { createAgUiHandler, toNodeListener } from '../src/web/index.ts';
import { summarize, type Summary } from './stats.ts';
import { measureServerCpu, type ServerCpu } from './webProcess.ts';
import { check, close, listen, readDirect, readStream, startServers, streamingAgent, taskFor } from './webRuns.ts';

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
  /** The page in its own process: the server's CPU time per token, per one-token run and at the margin. */
  readonly serverCpu: ServerCpu;
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

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

/** ms per run and text events per run of each way, `tokens`-token runs interleaved round by round. */
async function measureWays(tokens: number, runs: number, warmupRuns: number): Promise<Record<Way, { ms: number[]; deltas: number[] }>> {
  const agent = streamingAgent(tokens);
  const servers = await startServers(agent);
  try {
    const { agUiHandler, urls } = servers;
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
        const task = taskFor(way === 'transport', round, WAYS.indexOf(way));
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
    await servers.close();
  }
}

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
  const serverCpu = await measureServerCpu(options);
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
    serverCpu,
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
