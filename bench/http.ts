/**
 * Loopback HTTP: the contenders against the bench's stateless OpenAI-compatible server, started
 * in a process of its own on 127.0.0.1, measured by the same interleaved rounds as the in-process
 * rows. The server counts each contender's completions; the runs are checked against them.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measureRounds, type IterationResult, type RoundOptions } from './method.ts';
import { verifyCounts } from './scenarios/react.ts';
import type { HttpContender } from './scenarios/types.ts';

const here = dirname(fileURLToPath(import.meta.url));

/** Start bench/httpServer.ts with this process's flags; resolves with its port and a way to stop it. */
async function startServer(): Promise<{ port: number; stop(): void }> {
  const child = spawn(process.execPath, [...process.execArgv.filter((flag) => flag !== '--expose-gc'), join(here, 'httpServer.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const firstLine = await new Promise<string>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`The bench's HTTP server exited (code ${String(code)}) before printing its port.`)));
    createInterface({ input: child.stdout }).once('line', resolve);
  });
  return { port: Number(firstLine), stop: () => child.kill('SIGTERM') };
}

/**
 * @example
 * ```ts
 * const results = await measureHttp([bareOpenAI, actorloopHttp], { n: 10, rounds: 10, runsPerRound: 10, warmupRuns: 20 });
 * ```
 */
export async function measureHttp(contenders: readonly HttpContender[], options: RoundOptions): Promise<IterationResult[]> {
  const server = await startServer();
  try {
    const base = `http://127.0.0.1:${server.port}`;
    const entries = contenders.map((contender) => ({
      id: contender.id,
      label: contender.label,
      prepared: contender.create({ baseURL: `${base}/${contender.id}/v1`, model: `react-${options.n}` }),
    }));
    const results = await measureRounds(entries, options);
    const served = (await (await fetch(`${base}/counts`)).json()) as Record<string, number>;
    for (const [i, entry] of entries.entries()) {
      verifyCounts(entry.label, { model: served[entry.id] ?? 0, tool: entry.prepared.counts.tool }, (results[i] as IterationResult).runs, options.n);
    }
    return results;
  } finally {
    server.stop();
  }
}
