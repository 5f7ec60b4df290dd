/**
 * `npm run bench` — actorloop beside two floors, (a) a bare async loop with the model inline and
 * (b) the leanest XState loop, in one run: cost per loop iteration (react-10, react-100), durable
 * mode, loopback HTTP, 1 000 and 10 000 concurrent agents, stuck detection, strategy fan-out,
 * restoring a crashed run and the durable runtime on PostgreSQL (skipped with a note where PostgreSQL is not installed).
 * `npm run bench:peers` adds the Vercel AI SDK, OpenAI Agents JS and LangGraph.js (installed
 * into bench/peers on first use) and writes bench/RESULTS.md. Figures, not a test: nothing here
 * fails on a threshold; every run is checked for its answer and call counts.
 *
 *   npm run bench:peers            full run with the peers (writes bench/RESULTS.md)
 *   npm run bench                  the same without the peers
 *   npm run bench -- --quick       smoke run for CI: react-10, 100 agents, few samples
 *
 * Heap figures need `--expose-gc` (the npm scripts pass it). To see where the time goes, see
 * bench/profileLoop.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConcurrencyResult } from './concurrency.ts';
import type { ConcurrencyChildOptions } from './concurrencyMain.ts';
import { describeEnvironment } from './environment.ts';
import { measureFanOut } from './fanout.ts';
import { measureMcpCall } from './mcp.ts';
import { measureCedar } from './cedar.ts';
import { measureHooks } from './hooks.ts';
import { measureTraceBuilding } from './traces.ts';
import { measureRestore } from './restore.ts';
import { measureExperienceRetrieval } from './experiences.ts';
import { measurePostgres } from './postgres.ts';
import { measureHttp } from './http.ts';
import { measureRounds, type IterationResult, type RoundOptions } from './method.ts';
import { checkTargets, renderMarkdown, type BenchResults } from './report.ts';
import { actorloop, actorloopDurable } from './scenarios/actorloop.ts';
import { bareLoop } from './scenarios/bareLoop.ts';
import { actorloopHttp, bareOpenAI, bareProvider, xstateFloorHttp } from './scenarios/http.ts';
import { verifyCounts } from './scenarios/react.ts';
import { loadPeers, type Contender, type HttpContender } from './scenarios/types.ts';
import { xstateFloor } from './scenarios/xstateFloor.ts';
import { measureStuck } from './stuck.ts';

const quick = process.argv.includes('--quick');
const withPeers = process.argv.includes('--peers');
const here = dirname(fileURLToPath(import.meta.url));
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

interface Settings {
  readonly iterations: readonly RoundOptions[];
  readonly http: RoundOptions;
  /** Agent counts, each measured in a fresh process, and the entries measured at each. */
  readonly scales: readonly { readonly agents: number; readonly rounds: number; readonly entries: readonly string[] }[];
  readonly stuckRepeats: number;
  readonly stuckCaps: readonly number[];
  readonly fanOutRepeats: number;
  readonly mcp: { readonly rounds: number; readonly callsPerRound: number };
  readonly cedarCalls: number;
  readonly hooks: RoundOptions;
  readonly traceRepeats: number;
  /** Restoring a crashed run: at these iterations, samples (after warm-up) of each. */
  readonly restore: { readonly sizes: readonly number[]; readonly samples: number; readonly warmup: number };
  readonly experienceQueries: number;
  /** The PostgreSQL section: agents submitted at once per throughput run, and sequential runs timed. */
  readonly postgres: { readonly agents: number; readonly sequentialRuns: number };
}

const core = ['bare:shared', 'xstate:shared', 'actorloop:shared', 'actorloop:perAgent'];
// The peers at 1 000 agents only: at 10 000 the slowest of them takes minutes per batch.
const peerEntries = withPeers ? ['ai_sdk:shared', 'openai_agents:shared', 'langgraph:shared', 'langgraph_memory:shared'] : [];
const settings: Settings = quick
  ? {
      iterations: [{ n: 10, rounds: 3, runsPerRound: 5, warmupRuns: 10 }],
      http: { n: 10, rounds: 3, runsPerRound: 3, warmupRuns: 3 },
      scales: [{ agents: 100, rounds: 1, entries: [...core, 'actorloop_durable:shared', ...peerEntries] }],
      stuckRepeats: 3,
      stuckCaps: [],
      fanOutRepeats: 2,
      mcp: { rounds: 2, callsPerRound: 20 },
      cedarCalls: 200,
      hooks: { n: 10, rounds: 2, runsPerRound: 3, warmupRuns: 3 },
      traceRepeats: 20,
      restore: { sizes: [5, 500], samples: 20, warmup: 3 },
      experienceQueries: 20,
      postgres: { agents: 100, sequentialRuns: 5 },
    }
  : {
      iterations: [
        { n: 10, rounds: 30, runsPerRound: 30, warmupRuns: 100 },
        { n: 100, rounds: 20, runsPerRound: 3, warmupRuns: 10 },
      ],
      http: { n: 10, rounds: 20, runsPerRound: 10, warmupRuns: 20 },
      scales: [
        { agents: 1000, rounds: 3, entries: [...core, 'actorloop_durable:shared', ...peerEntries] },
        { agents: 10000, rounds: 3, entries: core },
      ],
      stuckRepeats: 30,
      stuckCaps: [16384],
      fanOutRepeats: 10,
      mcp: { rounds: 10, callsPerRound: 100 },
      cedarCalls: 5_000,
      hooks: { n: 10, rounds: 20, runsPerRound: 20, warmupRuns: 50 },
      traceRepeats: 500,
      restore: { sizes: [5, 50, 500], samples: 30, warmup: 5 },
      experienceQueries: 200,
      postgres: { agents: 2000, sequentialRuns: 20 },
    };

async function main(): Promise<void> {
  // Every file the bench creates, removed only when every figure is taken (see scenarios/actorloop.ts).
  const scratch = mkdtempSync(join(tmpdir(), 'actorloop-bench-'));
  try {
    await measureAll(scratch);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function measureAll(scratch: string): Promise<void> {
  const environment = describeEnvironment(scratch);
  const peers = withPeers ? await loadPeers() : { peers: [], httpPeers: [] };
  const contenders: Contender[] = [bareLoop, xstateFloor, actorloop, actorloopDurable(mkdtempSync(join(scratch, 'durable-'))), ...peers.peers];
  const httpContenders: HttpContender[] = [bareOpenAI, bareProvider, xstateFloorHttp, actorloopHttp, ...peers.httpPeers];

  const iterations: IterationResult[] = [];
  for (const options of settings.iterations) {
    log(`react-${options.n}: ${contenders.length} contenders × ${options.rounds} rounds of ${options.runsPerRound} runs`);
    const entries = contenders.map((c) => ({ id: c.id, label: c.label, prepared: c.create({ n: options.n, delayMs: 0 }) }));
    const results = await measureRounds(entries, options);
    for (const [i, entry] of entries.entries()) verifyCounts(entry.label, entry.prepared.counts, (results[i] as IterationResult).runs, options.n);
    iterations.push(...results);
  }

  log(`loopback HTTP, react-10: ${httpContenders.length} contenders × ${settings.http.rounds} rounds`);
  const http = await measureHttp(httpContenders, settings.http);

  const concurrency: ConcurrencyResult[] = [];
  for (const scale of settings.scales) {
    log(`${scale.agents} concurrent agents, react-10, 5 ms model: ${scale.entries.length} entries × ${scale.rounds} rounds in a fresh process`);
    const options: ConcurrencyChildOptions = { agents: scale.agents, rounds: scale.rounds, entries: scale.entries, storeRoot: scratch, peers: withPeers };
    concurrency.push(...runJsonChild<ConcurrencyResult[]>(join(here, 'concurrencyMain.ts'), options));
  }

  log('stuck detection on two 1 MB outputs');
  const stuck = measureStuck({ repeats: settings.stuckRepeats, extraCaps: settings.stuckCaps });
  log('strategy fan-out');
  const fanOut = await measureFanOut({ repeats: settings.fanOutRepeats });
  log('a tool call through a stdio MCP server vs a local tool');
  const mcp = await measureMcpCall(settings.mcp);
  log('the Cedar gate on a 50-policy set');
  const cedar = measureCedar({ policies: 50, calls: settings.cedarCalls });

  log('lifecycle hooks: none, one sync hook of each kind, all seven');
  const hooks = await measureHooks(settings.hooks);
  log('reading a react-100 run back as a trace');
  const traces = await measureTraceBuilding({ n: 100, repeats: settings.traceRepeats });
  log(`restoring a crashed run at ${settings.restore.sizes.join(', ')} iterations, with checkpoints and without`);
  const restore = await measureRestore({ ...settings.restore, dir: mkdtempSync(join(scratch, 'restore-')) });
  log('experience retrieval at 10 000 items');
  const experiences = await measureExperienceRetrieval({ items: 10_000, queries: settings.experienceQueries });
  log('the durable runtime on PostgreSQL: throughput on one and two worker processes, step latency, cost per iteration');
  const postgres = await measurePostgres({ ...settings.postgres, log });
  if ('skipped' in postgres) log(postgres.skipped);

  const measured = { quick, peers: withPeers, environment, loadAtEnd: Number((loadavg()[0] ?? 0).toFixed(2)), iterations, http, concurrency, stuck, fanOut, mcp, cedar, hooks, traces, restore, experiences, postgres };
  const results: BenchResults = { ...measured, targets: checkTargets(measured) };
  const markdown = renderMarkdown(results);
  process.stdout.write(`${markdown}\n`);

  const resultsDir = join(here, 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(resultsDir, 'latest.md'), markdown);
  const full = withPeers && !quick;
  if (full) writeFileSync(join(here, 'RESULTS.md'), `# actorloop benchmark results\n\nProduced by \`npm run bench:peers\` (bench/run.ts); re-run it to refresh this file.\n\n${markdown}`);
  log(`wrote bench/results/latest.{json,md}${full ? ' and bench/RESULTS.md' : ''}`);
}

/** Run `node <this process's flags> <script> <options as JSON>` and parse what it prints. */
function runJsonChild<T>(script: string, options: object): T {
  const child = spawnSync(process.execPath, [...process.execArgv, script, JSON.stringify(options)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (child.status !== 0) throw new Error(`A benchmark child process (${script}) failed (exit ${String(child.status)}).`);
  return JSON.parse(child.stdout) as T;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
