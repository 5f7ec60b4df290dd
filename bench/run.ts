/**
 * `npm run bench` — actorloop against a hand-written loop, a minimal XState machine and (react-N
 * only) the Vercel AI SDK, side by side in one run: react-N per-iteration overhead (contenders
 * interleaved in this process, then each alone in child processes), many concurrent agents (in
 * fresh child processes: contenders interleaved, then each alone), stuck detection and strategy
 * fan-out. Prints a markdown table, writes bench/results/latest.json and (full runs only)
 * bench/RESULTS.md.
 * Figures, not a test: nothing here fails on a threshold.
 *
 *   npm run bench               full run (about 15 minutes on a 2-core machine)
 *   npm run bench -- --quick    smoke run for CI (about a minute): N=10 only, 100 agents, few samples
 *
 * Heap figures need `--expose-gc` (the npm script passes it). To see where the time goes, see
 * bench/profileLoop.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { concurrencyKey, withPairedRatios, type ConcurrencyResult } from './concurrency.ts';
import { describeEnvironment } from './environment.ts';
import { measureFanOut } from './fanout.ts';
import { measureIterations, type IterationResult } from './iterations.ts';
import { checkTargets, renderMarkdown, type BenchResults } from './report.ts';
import { actorloop } from './scenarios/actorloop.ts';
import { actorloopWithFileStore } from './scenarios/actorloopFileStore.ts';
import { aiSdk } from './scenarios/aiSdk.ts';
import { bareLoop } from './scenarios/bareLoop.ts';
import type { Contender } from './scenarios/types.ts';
import { xstateMachine } from './scenarios/xstateMachine.ts';
import { fmt, summarize } from './stats.ts';
import { measureStuck } from './stuck.ts';

const quick = process.argv.includes('--quick');
const here = dirname(fileURLToPath(import.meta.url));
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

const settings = quick
  ? { ns: [10], longN: 0, rounds: 3, samplesPerRound: 4, warmupIterations: 300, aloneRounds: 2, iterationProcesses: 1, agents: 100, concurrencyRepeats: 1, concurrencyProcesses: 1, stuckRepeats: 3, stuckCaps: [], fanOutRepeats: 2 }
  : { ns: [10, 100], longN: 1000, rounds: 30, samplesPerRound: 10, warmupIterations: 5000, aloneRounds: 10, iterationProcesses: 3, agents: 1000, concurrencyRepeats: 3, concurrencyProcesses: 5, stuckRepeats: 30, stuckCaps: [16384], fanOutRepeats: 10 };

async function main(): Promise<void> {
  // Every file the bench creates, removed only when every figure is taken (see actorloopFileStore.ts).
  const scratch = mkdtempSync(join(tmpdir(), 'actorloop-bench-'));
  try {
    await measureAll(scratch);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function measureAll(scratch: string): Promise<void> {
  const environment = describeEnvironment(scratch);
  const notes: string[] = [];
  if (!environment.gcExposed) notes.push('Heap figures need node --expose-gc (npm run bench passes it).');
  const journalStore = actorloopWithFileStore('actorloop_journal', scratch);
  const fileStore = actorloopWithFileStore('actorloop_file', scratch);
  // (f), the AI SDK, runs react-N only: it has no concurrent-agent primitive, and at N=1000 it
  // re-converts 2 000 messages per step.
  const contenders: Contender[] = [bareLoop, xstateMachine, actorloop, journalStore.contender, fileStore.contender, aiSdk];

  const iterations: IterationResult[] = [];
  const longRuns: IterationResult[] = [];
  for (const n of settings.ns) {
    log(`react-${n}: ${contenders.length} contenders × ${settings.rounds} rounds`);
    iterations.push(
      ...(await measureIterations(contenders, {
        n,
        rounds: settings.rounds,
        samplesPerRound: settings.samplesPerRound,
        warmupIterations: settings.warmupIterations,
        iterationsPerSample: 100,
      })),
    );
  }
  if (settings.longN > 0) {
    // Does the cost per iteration stay flat as the conversation grows? (b) has no conversation: it shows the drift.
    log(`react-${settings.longN}: (b), (c), (d) and (e) × 10 rounds`);
    longRuns.push(
      ...(await measureIterations([xstateMachine, actorloop, journalStore.contender, fileStore.contender], {
        n: settings.longN,
        rounds: 10,
        samplesPerRound: 1,
        warmupIterations: 2 * settings.longN,
        iterationsPerSample: settings.longN,
      })),
    );
  }

  log(`react-N again, each of ${contenders.length} contenders alone in its own process (${settings.iterationProcesses} rounds)`);
  const iterationsAloneRuns: IterationResult[][] = [];
  for (let round = 0; round < settings.iterationProcesses; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const contender = contenders[(round + k) % contenders.length] as Contender;
      iterationsAloneRuns.push(
        runJsonChild<IterationResult[]>([...process.execArgv, join(here, 'iterationsMain.ts')], {
          contender: contender.id,
          ns: settings.ns,
          rounds: settings.aloneRounds,
          samplesPerRound: settings.samplesPerRound,
          warmupIterations: settings.warmupIterations,
          storeRoot: scratch,
        }),
      );
    }
  }
  const iterationsAlone = iterations.map((interleaved) => {
    const same = iterationsAloneRuns.flat().filter((r) => r.id === interleaved.id && r.n === interleaved.n);
    return {
      ...interleaved,
      perIterationUs: summarize(same.flatMap((r) => r.perIterationUs.samples)),
      cpuPerIterationUs: summarize(same.flatMap((r) => r.cpuPerIterationUs.samples)),
    };
  });

  const processes = settings.concurrencyProcesses === 1 ? 'a fresh process' : `${settings.concurrencyProcesses} fresh processes`;
  log(`${settings.agents} concurrent agents, react-10, 5 ms model (${processes})`);
  // Separate processes, not more rounds in one: the figure swings more between processes (JIT
  // and heap layout) than between rounds of one, so one process alone can mislead.
  const perProcess: ConcurrencyResult[][] = [];
  for (let i = 0; i < settings.concurrencyProcesses; i++) {
    perProcess.push(measureConcurrencyInChild({ agents: settings.agents, repeats: settings.concurrencyRepeats, storeRoot: scratch }));
  }
  const concurrency = withPairedRatios(mergeConcurrency(perProcess), perProcess);

  // Interleaved contenders share XState's compiled code and inline caches: (b) run alone is
  // faster than (b) run next to (c), which flatters the ratio. Each one alone, in turn:
  const keys = concurrency.map(concurrencyKey);
  log(`the same, each of ${keys.length} contenders alone in its own process (${settings.concurrencyProcesses} rounds)`);
  const alone: ConcurrencyResult[][] = [];
  for (let round = 0; round < settings.concurrencyProcesses; round++) {
    for (let k = 0; k < keys.length; k++) {
      const key = keys[(round + k) % keys.length] as string;
      alone.push(measureConcurrencyInChild({ agents: settings.agents, repeats: settings.concurrencyRepeats, only: [key], storeRoot: scratch }));
    }
  }
  // A round's processes run within a minute or so of each other: the ratios are taken per round.
  const rounds = Array.from({ length: settings.concurrencyProcesses }, (_, round) => alone.slice(round * keys.length, (round + 1) * keys.length).flat());
  const concurrencyAlone = withPairedRatios(
    keys.map((key) => mergeConcurrency(alone.filter((results) => results[0] !== undefined && concurrencyKey(results[0]) === key))[0] as ConcurrencyResult),
    rounds,
  );
  if (!quick) {
    // The same scenario compiled ahead of time, the way a published package runs: tsx compiles
    // with keepNames, which names every closure as it is created, and per-agent closures pay.
    log(`${settings.agents} concurrent agents, compiled with esbuild (no tsx), a fresh process`);
    const compiled = await measureConcurrencyCompiled({ agents: settings.agents, repeats: settings.concurrencyRepeats, storeRoot: scratch });
    notes.push(describeCompiled(compiled));
  }

  log('stuck detection on two 1 MB outputs');
  const stuck = measureStuck({ repeats: settings.stuckRepeats, extraCaps: settings.stuckCaps });
  log('strategy fan-out');
  const fanOut = await measureFanOut({ repeats: settings.fanOutRepeats });
  notes.push(
    'Per-iteration samples each time ≥ 100 loop iterations (10 runs of react-10, 1 of react-100) so GC is amortised alike for every N; contenders are interleaved round by round in one process. ' +
      `Then again with each contender alone in a process of its own (${settings.iterationProcesses} such process${settings.iterationProcesses === 1 ? '' : 'es'} each, taking turns, ${settings.aloneRounds * settings.samplesPerRound} samples per process); the targets are checked on both.`,
    `The concurrency scenario runs in ${processes} (same flags), its contenders interleaved round by round; medians over every process's rounds. ` +
      `Then again with each contender and mode alone in a process of its own, ${settings.concurrencyProcesses} such process${settings.concurrencyProcesses === 1 ? '' : 'es'} each, taking turns; the targets are checked on both. ` +
      'Paired ratios: wall time over (b)\'s within one process (interleaved) or within one round of alone processes, median over processes or rounds; ' +
      "this machine's speed drifts by tens of percent over minutes, which a ratio of neighbours cancels and a ratio of pooled medians does not. The wall-time targets are checked on the paired ratios.",
  );

  const results: BenchResults = {
    quick,
    environment,
    iterations,
    longRuns,
    iterationsAlone,
    concurrency,
    concurrencyAlone,
    stuck,
    fanOut,
    notes,
    targets: checkTargets(iterations, concurrency, concurrencyAlone, stuck, fanOut, iterationsAlone),
  };
  const markdown = renderMarkdown(results);
  process.stdout.write(`${markdown}\n`);

  const resultsDir = join(here, 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  if (!quick) {
    writeFileSync(
      join(here, 'RESULTS.md'),
      `# actorloop benchmark results\n\nProduced by \`npm run bench\` (bench/run.ts); re-run it to refresh this file.\n\n${markdown}`,
    );
  }
  log(`wrote ${join(resultsDir, 'latest.json')}${quick ? '' : ' and bench/RESULTS.md'}`);
}

/** Run bench/concurrencyMain.ts in a fresh Node process with this process's flags (--expose-gc, tsx). */
function measureConcurrencyInChild(options: ChildOptions): ConcurrencyResult[] {
  return runChild([...process.execArgv, join(here, 'concurrencyMain.ts')], options);
}

/** What concurrencyMain.ts reads from argv; `only` names the entries to measure (`id:mode`), default all. */
interface ChildOptions {
  readonly agents: number;
  readonly repeats: number;
  readonly only?: readonly string[];
  /** Where durable mode keeps its store; run.ts removes it when the bench ends. */
  readonly storeRoot?: string;
}

function runChild(args: readonly string[], options: ChildOptions): ConcurrencyResult[] {
  return runJsonChild<ConcurrencyResult[]>(args, options);
}

/** Run `node <args> <options as JSON>` and parse what it prints. */
function runJsonChild<T>(args: readonly string[], options: object): T {
  const child = spawnSync(process.execPath, [...args, JSON.stringify(options)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 * 1024 * 1024,
  });
  if (child.status !== 0) throw new Error(`A benchmark child process (${args.at(-1) ?? ''}) failed (exit ${String(child.status)}).`);
  return JSON.parse(child.stdout) as T;
}

/** bench/concurrencyMain.ts bundled by esbuild (dependencies left external) and run by plain node. */
async function measureConcurrencyCompiled(options: ChildOptions): Promise<ConcurrencyResult[]> {
  const { build } = await import('esbuild');
  const outfile = join(here, 'results', 'compiled', 'concurrencyMain.mjs');
  await build({ entryPoints: [join(here, 'concurrencyMain.ts')], bundle: true, platform: 'node', format: 'esm', packages: 'external', outfile, logLevel: 'warning' });
  return runChild(['--expose-gc', outfile], options);
}

/** Wall-time ratios to (b) of the compiled run. */
function describeCompiled(results: readonly ConcurrencyResult[]): string {
  const xstate = results.find((r) => r.id === 'xstate');
  const parts = results
    .filter((r) => r.id === 'actorloop')
    .map((r) => `${r.mode} ${xstate === undefined ? 'n/a' : `${fmt(r.wallMs.median / xstate.wallMs.median)}×`} (heap ${r.heapPerAgentKb === null ? 'n/a' : fmt(r.heapPerAgentKb)} KB per agent)`);
  return `Concurrency compiled with esbuild and run without tsx (one process), wall vs (b) compiled alike: ${parts.join('; ')}.`;
}

/** One result per contender and mode: samples of every process together, heap as the median of the processes'. */
function mergeConcurrency(perProcess: readonly ConcurrencyResult[][]): ConcurrencyResult[] {
  const first = perProcess[0] ?? [];
  return first.map((result, i) => {
    const same = perProcess.map((results) => results[i] as ConcurrencyResult);
    const heaps = same.map((r) => r.heapPerAgentKb).filter((h): h is number => h !== null);
    return {
      ...result,
      wallMs: summarize(same.flatMap((r) => r.wallMs.samples)),
      cpuMs: summarize(same.flatMap((r) => r.cpuMs.samples)),
      heapPerAgentKb: heaps.length === 0 ? null : summarize(heaps).median,
    };
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
