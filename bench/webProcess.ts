/**
 * Web streaming with the page in its own process: a child process (closest to a browser: its HTTP
 * parsing, JSON decoding and garbage are not the server's, as they are when one process does both)
 * reads each run over HTTP and checks its text, while this process serves it and counts its own CPU
 * time (user + system) per run. `tokens$` read in this process is the baseline.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { summarize, type Summary } from './stats.ts';
import { check, readDirect, startServers, streamingAgent, taskFor, type Protocol } from './webRuns.ts';
import type { Ping, ReadAnswer, ReadOrder } from './webReader.ts';

const here = dirname(fileURLToPath(import.meta.url));

/** `order`: an order to the page and its answer alone, no HTTP; every way but `direct` pays it once a run. */
export type CpuWay = 'direct' | 'agUi' | 'aiSdk' | 'transport' | 'byHand' | 'order';
const CPU_WAYS: readonly CpuWay[] = ['direct', 'agUi', 'aiSdk', 'transport', 'byHand', 'order'];

export interface ServerCpu {
  /** µs of the server's CPU per token at the main length, one sample per run. */
  readonly usPerToken: Readonly<Record<CpuWay, Summary>>;
  /** Text events a run's stream carried at the main length. */
  readonly textEvents: Readonly<Record<CpuWay, Summary>>;
  /** ms of the server's CPU per one-token run. */
  readonly fixedMs: Readonly<Record<CpuWay, Summary>>;
  /** µs of the server's CPU per token between runs of the two slope lengths (the slope of the medians). */
  readonly marginalUs: Readonly<Record<CpuWay, number>>;
}

/** The reader child, one run at a time; it runs with this process's flags but for the heap and profiling ones. */
export function startReader(): { read(order: ReadOrder | Ping): Promise<number>; stop(): void } {
  const execArgv = process.execArgv.filter((flag) => flag !== '--expose-gc' && !flag.startsWith('--cpu-prof'));
  const child: ChildProcess = fork(join(here, 'webReader.ts'), { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let pending: { resolve(deltas: number): void; reject(error: Error): void } | undefined;
  const fail = (error: Error) => {
    pending?.reject(error);
    pending = undefined;
  };
  child.on('message', (message: ReadAnswer) => {
    if ('error' in message) fail(new Error(`web bench: the reader process: ${message.error}`));
    else pending?.resolve(message.deltas);
    pending = undefined;
  });
  child.on('exit', (code) => fail(new Error(`web bench: the reader process exited (code ${String(code)})`)));
  child.on('error', fail);
  return {
    read: (order) =>
      new Promise((resolve, reject) => {
        pending = { resolve, reject };
        child.send(order);
      }),
    stop: () => void child.kill(),
  };
}

/** What the server does after the reader has the end of its reply (closing the run, the socket's turn) belongs to the run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 2));

/** µs of this process's CPU and text events per run of each way, `tokens`-token runs interleaved round by round. */
async function measureCpu(tokens: number, runs: number, warmupRuns: number): Promise<Record<CpuWay, { us: number[]; deltas: number[] }>> {
  const agent = streamingAgent(tokens);
  const servers = await startServers(agent);
  const reader = startReader();
  try {
    const samples = Object.fromEntries(CPU_WAYS.map((way) => [way, { us: [] as number[], deltas: [] as number[] }])) as Record<CpuWay, { us: number[]; deltas: number[] }>;
    const read = async (way: CpuWay, task: string, id: string): Promise<number> => {
      if (way === 'direct') {
        const got = await readDirect(agent, task, id);
        check(way, task, tokens, got, false);
        return got.deltas;
      }
      if (way === 'order') return reader.read({ ping: true });
      const protocol: Protocol = way === 'aiSdk' ? 'aiSdk' : 'agUi';
      return reader.read({ url: servers.urls[way], protocol, task, id, tokens });
    };
    for (let round = 0; round < warmupRuns + runs; round++) {
      for (let k = 0; k < CPU_WAYS.length; k++) {
        const way = CPU_WAYS[(round + k) % CPU_WAYS.length] as CpuWay;
        const before = process.cpuUsage();
        const deltas = await read(way, taskFor(way === 'transport', round, CPU_WAYS.indexOf(way)), `cpu-${round}-${way}`);
        await settle();
        const used = process.cpuUsage(before);
        if (round < warmupRuns) continue;
        samples[way].us.push(used.user + used.system);
        samples[way].deltas.push(deltas);
      }
    }
    return samples;
  } finally {
    reader.stop();
    agent.stop();
    await servers.close();
  }
}

const byWay = <T>(make: (way: CpuWay) => T): Record<CpuWay, T> => Object.fromEntries(CPU_WAYS.map((way) => [way, make(way)])) as Record<CpuWay, T>;

/**
 * @example
 * ```ts
 * const cpu = await measureServerCpu({ tokens: 2000, runs: 30, warmupRuns: 5, slopeTokens: [500, 4000] });
 * cpu.marginalUs.agUi / cpu.marginalUs.direct;
 * ```
 */
export async function measureServerCpu(options: { tokens: number; runs: number; warmupRuns: number; slopeTokens: readonly [number, number] }): Promise<ServerCpu> {
  const { tokens, runs, warmupRuns } = options;
  const [fewer, more] = options.slopeTokens;
  const main = await measureCpu(tokens, runs, warmupRuns);
  const one = await measureCpu(1, runs, warmupRuns);
  const short = await measureCpu(fewer, runs, warmupRuns);
  const long = await measureCpu(more, runs, warmupRuns);
  return {
    usPerToken: byWay((way) => summarize(main[way].us.map((us) => us / tokens))),
    textEvents: byWay((way) => summarize(main[way].deltas)),
    fixedMs: byWay((way) => summarize(one[way].us.map((us) => us / 1000))),
    marginalUs: byWay((way) => (summarize(long[way].us).median - summarize(short[way].us).median) / (more - fewer)),
  };
}
