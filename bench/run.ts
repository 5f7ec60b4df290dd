/**
 * `npm run bench` — actorloop beside two floors, (a) a bare async loop with the model inline and
 * (b) the leanest XState loop, in one run: cost per loop iteration (react-10, react-100), durable
 * mode, loopback HTTP, 1 000 and 10 000 concurrent agents, stuck detection, strategy fan-out,
 * restoring a crashed run, web streaming over SSE and the durable runtime on PostgreSQL (skipped with a note where PostgreSQL is not installed).
 * `npm run bench:peers` adds the Vercel AI SDK, OpenAI Agents JS and LangGraph.js (installed
 * into bench/peers on first use) and writes bench/RESULTS.md. Figures, not a test: nothing here
 * fails on a threshold; every run is checked for its answer and call counts.
 *
 *   npm run bench:peers            full run with the peers (writes bench/RESULTS.md)
 *   npm run bench                  the same without the peers
 *   npm run bench -- --quick       smoke run for CI: react-10, 100 agents, few samples
 *   npm run bench -- --only postgres[,cedar…]   only those sections (names in SECTIONS below)
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
import { measurePostgres, type PostgresOptions } from './postgres.ts';
import { measureHttp } from './http.ts';
import { measureWeb, type WebOptions } from './web.ts';
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

/** The sections, in the order they run; `--only` picks some of them. */
const SECTIONS = ['iterations', 'http', 'concurrency', 'stuck', 'fanout', 'mcp', 'cedar', 'hooks', 'traces', 'restore', 'experiences', 'web', 'postgres'] as const;
type Section = (typeof SECTIONS)[number];

/** `--only a,b` or `--only=a,b`: undefined when absent; an unknown name is an error, not a silent empty run. */
function parseOnly(argv: readonly string[]): readonly Section[] | undefined {
  const at = argv.findIndex((arg) => arg === '--only' || arg.startsWith('--only='));
  if (at === -1) return undefined;
  const arg = argv[at] as string;
  const value = arg === '--only' ? (argv[at + 1] ?? '') : arg.slice('--only='.length);
  const names = value.split(',').filter((name) => name !== '');
  const known = new Set<string>(SECTIONS);
  const unknown = names.filter((name) => !known.has(name));
  if (names.length === 0 || unknown.length > 0) throw new Error(`--only takes sections among ${SECTIONS.join(', ')} (got "${value}").`);
  return names as Section[];
}

const only = parseOnly(process.argv);
const wanted = (section: Section): boolean => only === undefined || only.includes(section);
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
  readonly web: WebOptions;
  /** The PostgreSQL section (see PostgresOptions). */
  readonly postgres: Omit<PostgresOptions, 'log' | 'concurrency'>;
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
      web: { tokens: 500, runs: 3, warmupRuns: 1, concurrentRuns: 100, concurrentTokens: 20, slopeTokens: [100, 500] },
      postgres: { agents: 100, workers: [1, 2], waiting: 1000, fsyncOn: false, sequentialRuns: 5 },
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
      web: { tokens: 2000, runs: 30, warmupRuns: 5, concurrentRuns: 1000, concurrentTokens: 50, slopeTokens: [500, 4000] },
      postgres: { agents: 2000, workers: [1, 2, 4], waiting: 20_000, fsyncOn: true, sequentialRuns: 20 },
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
  for (const options of wanted('iterations') ? settings.iterations : []) {
    log(`react-${options.n}: ${contenders.length} contenders × ${options.rounds} rounds of ${options.runsPerRound} runs`);
    const entries = contenders.map((c) => ({ id: c.id, label: c.label, prepared: c.create({ n: options.n, delayMs: 0 }) }));
    const results = await measureRounds(entries, options);
    for (const [i, entry] of entries.entries()) verifyCounts(entry.label, entry.prepared.counts, (results[i] as IterationResult).runs, options.n);
    iterations.push(...results);
  }

  if (wanted('http')) log(`loopback HTTP, react-10: ${httpContenders.length} contenders × ${settings.http.rounds} rounds`);
  const http = wanted('http') ? await measureHttp(httpContenders, settings.http) : [];

  const concurrency: ConcurrencyResult[] = [];
  for (const scale of wanted('concurrency') ? settings.scales : []) {
    log(`${scale.agents} concurrent agents, react-10, 5 ms model: ${scale.entries.length} entries × ${scale.rounds} rounds in a fresh process`);
    const options: ConcurrencyChildOptions = { agents: scale.agents, rounds: scale.rounds, entries: scale.entries, storeRoot: scratch, peers: withPeers };
    concurrency.push(...runJsonChild<ConcurrencyResult[]>(join(here, 'concurrencyMain.ts'), options));
  }

  /** Measure a section only if it was picked, saying what it measures. */
  const section = async <T>(name: Section, what: string, measure: () => T | Promise<T>): Promise<T | undefined> => {
    if (!wanted(name)) return undefined;
    log(what);
    return measure();
  };
  const stuck = (await section('stuck', 'stuck detection on two 1 MB outputs', () => measureStuck({ repeats: settings.stuckRepeats, extraCaps: settings.stuckCaps }))) ?? [];
  const fanOut = await section('fanout', 'strategy fan-out', () => measureFanOut({ repeats: settings.fanOutRepeats }));
  const mcp = await section('mcp', 'a tool call through a stdio MCP server vs a local tool', () => measureMcpCall(settings.mcp));
  const cedar = await section('cedar', 'the Cedar gate on a 50-policy set', () => measureCedar({ policies: 50, calls: settings.cedarCalls }));
  const hooks = await section('hooks', 'lifecycle hooks: none, one sync hook of each kind, all seven', () => measureHooks(settings.hooks));
  const traces = await section('traces', 'reading a react-100 run back as a trace', () => measureTraceBuilding({ n: 100, repeats: settings.traceRepeats }));
  const restore = await section('restore', `restoring a crashed run at ${settings.restore.sizes.join(', ')} iterations, with checkpoints and without`, () =>
    measureRestore({ ...settings.restore, dir: mkdtempSync(join(scratch, 'restore-')) }),
  );
  const experiences = await section('experiences', 'experience retrieval at 10 000 items', () => measureExperienceRetrieval({ items: 10_000, queries: settings.experienceQueries }));
  const web = await section('web', `web streaming: ${settings.web.tokens} tokens via tokens$ vs the AG-UI and AI SDK handlers over HTTP; ${settings.web.concurrentRuns} concurrent runs`, () =>
    measureWeb(settings.web),
  );
  const postgres = await section('postgres', 'the durable runtime on PostgreSQL: throughput and cost per agent by worker processes, with runs waiting on a human, with fsync on, cost per iteration', () =>
    measurePostgres({ ...settings.postgres, log }),
  );
  if (postgres !== undefined && 'skipped' in postgres) log(postgres.skipped);

  const measured = { quick, ...(only === undefined ? {} : { only }), peers: withPeers, environment, loadAtEnd: Number((loadavg()[0] ?? 0).toFixed(2)), iterations, http, concurrency, stuck, fanOut, mcp, cedar, hooks, traces, restore, experiences, web, postgres };
  const results: BenchResults = { ...measured, targets: checkTargets(measured) };
  const markdown = renderMarkdown(results);
  process.stdout.write(`${markdown}\n`);

  const resultsDir = join(here, 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(resultsDir, 'latest.md'), markdown);
  // RESULTS.md is the full run's: a run of some sections only leaves it as it is.
  const full = withPeers && !quick && only === undefined;
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
