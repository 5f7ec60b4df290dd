/**
 * Restoring a run after a crash: how long `agent.resume()` takes to bring a react-N run back to
 * where it was, killed right before its last model call, at 5 and at 500 iterations. With
 * checkpoints (the file store's default) a resume reads the log's last checkpoint, its bases and
 * what followed it; without, it replays the whole log. Timed from `resume()` to the first live
 * model call (reading, rebuilding and replaying; not finishing the run). Every sample resumes its
 * own copy of the crashed log, in one store, taking turns with the other rows. A run whose id the
 * store picked lives in a journal segment shared with other runs, and its first resume moves it
 * out to a log of its own: those rows time that path.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAgent, createFileStore, type Agent, type Completion, type CompletionRequest, type RunStore } from '../src/index.ts';
import { segmentFile, segmentIdOf } from '../src/persistence/journalSegment.ts';
import { lineKind } from '../src/persistence/records.ts';
import type { RecoveredRun } from '../src/persistence/recover.ts';
import { echoTool, scriptedProvider } from './scenarios/actorloop.ts';
import { TASK, newCounts } from './scenarios/react.ts';
import { summarize, type Summary } from './stats.ts';

export interface RestoreRow {
  /** Iterations the run had made when it was killed. */
  readonly iterations: number;
  readonly checkpoints: boolean;
  /** In a journal segment (an id the store picked) rather than a log of its own. */
  readonly segment: boolean;
  /** The crashed run's log. */
  readonly logBytes: number;
  /** What the store read of it to restore the run (the last sample's). */
  readonly recordsRead: number;
  readonly bytesRead: number;
  readonly ms: Summary;
  /** Process CPU (user + system) over the same span: steadier than wall time on a busy machine. */
  readonly cpuMs: Summary;
}

export interface RestoreResult {
  readonly rows: readonly RestoreRow[];
}

export interface RestoreOptions {
  readonly sizes: readonly number[];
  readonly samples: number;
  readonly warmup: number;
  /** A scratch folder for the stores. */
  readonly dir: string;
}

/** Run ids of one length: a copy's byte offsets (which checkpoints name their bases by) stay the same. */
const runId = (n: number) => `run_${String(n).padStart(6, '0')}`;
/** A segment's id, its random part made a counter: the same length as the one it stands for. */
const segmentId = (crashed: string, n: number) => `${crashed.slice(0, -16)}${n.toString(16).padStart(16, '0')}`;

interface CrashedLog {
  readonly text: string;
  /** The segment's id, for a run in one. */
  readonly segment?: string;
}

/** The log of a react-(n+1) run cut right before its last model reply: n iterations made, the answer still to come. */
async function crashedLog(dir: string, n: number, checkpoints: boolean, segment: boolean): Promise<CrashedLog> {
  const counts = newCounts();
  const store = createFileStore({ dir, ...(checkpoints ? {} : { checkpoints: false }) });
  const agent = createAgent({ model: scriptedProvider({ n: n + 1, delayMs: 0 }, counts), tools: [echoTool(counts)], limits: { maxIterations: n + 2 }, persistence: { store } });
  const run = agent.start(TASK, segment ? {} : { runId: runId(0) });
  const result = await run.settled;
  if (result.status !== 'done') throw new Error(`restore: the react-${n + 1} run ended ${result.status}.`);
  const id = segmentIdOf(run.runId);
  if (segment !== (id !== undefined)) throw new Error(`restore: run ${run.runId} is ${id === undefined ? 'not ' : ''}in a segment.`);
  const lines = readFileSync(id === undefined ? join(dir, 'runs', `${run.runId}.jsonl`) : segmentFile(join(dir, 'journal'), id), 'utf8').split(/(?<=\n)/);
  const lastReply = lines.findLastIndex((line) => lineKind(line) === 'reason');
  return { text: lines.slice(0, lastReply).join(''), ...(id === undefined ? {} : { segment: id }) };
}

interface Case {
  readonly iterations: number;
  readonly checkpoints: boolean;
  readonly log: CrashedLog;
  readonly agent: Agent;
  readonly samples: number[];
  readonly cpu: number[];
  /** When the resumed run called its model (it was restored by then), the CPU used by then, and what its store read. */
  readonly last: { live: number; cpu: NodeJS.CpuUsage; read: RecoveredRun['read'] };
}

/**
 * @example
 * ```ts
 * const { rows } = await measureRestore({ sizes: [5, 500], samples: 20, warmup: 3, dir });
 * ```
 */
export async function measureRestore(options: RestoreOptions): Promise<RestoreResult> {
  const cases: Case[] = [];
  for (const [checkpoints, segment] of [
    [true, false],
    [true, true],
    [false, false],
  ] as const) {
    const stores = join(options.dir, checkpoints ? 'with' : 'without');
    const files = createFileStore({ dir: join(stores, 'restore'), ...(checkpoints ? {} : { checkpoints: false }) });
    mkdirSync(join(files.dir, 'runs'), { recursive: true });
    mkdirSync(join(files.dir, 'journal'), { recursive: true });
    for (const iterations of options.sizes) {
      const log = await crashedLog(join(stores, `source-${iterations}${segment ? '-segment' : ''}`), iterations, checkpoints, segment);
      const provider = scriptedProvider({ n: iterations + 1, delayMs: 0 }, newCounts());
      const last: Case['last'] = { live: 0, cpu: process.cpuUsage(), read: undefined };
      const model = {
        ...provider,
        complete: <TOutput>(request: CompletionRequest<TOutput>): Promise<Completion<TOutput>> => {
          last.live = performance.now();
          last.cpu = process.cpuUsage(last.cpu);
          return provider.complete(request);
        },
      };
      const store: RunStore = {
        ...files,
        resumeRun(id, resumeOptions) {
          const resumed = files.resumeRun(id, resumeOptions);
          last.read = resumed.recovered.read;
          return resumed;
        },
      };
      const agent = createAgent({ model, tools: [echoTool(newCounts())], limits: { maxIterations: iterations + 2 }, persistence: { store } });
      cases.push({ iterations, checkpoints, log, agent, samples: [], cpu: [], last });
    }
  }
  let next = 1;
  // With checkpoints, then without: the rows that replay whole logs leave garbage the others would pay for.
  for (const group of [cases.filter((c) => c.checkpoints), cases.filter((c) => !c.checkpoints)]) {
    for (let round = 0; round < options.warmup + options.samples; round++) {
      for (const entry of group) {
        const store = join(options.dir, entry.checkpoints ? 'with' : 'without', 'restore');
        const { text, segment } = entry.log;
        let id: string;
        if (segment === undefined) {
          id = runId(next++);
          writeFileSync(join(store, 'runs', `${id}.jsonl`), text.replaceAll(runId(0), id));
        } else {
          const copy = segmentId(segment, next++);
          id = `run_${copy}_0`;
          writeFileSync(segmentFile(join(store, 'journal'), copy), text.replaceAll(segment, copy));
        }
        entry.last.cpu = process.cpuUsage();
        const started = performance.now();
        const result = await entry.agent.resume(id).settled;
        if (result.status !== 'done' || result.iterations !== entry.iterations + 1) throw new Error(`restore: the resumed react-${entry.iterations + 1} run ended ${result.status} after ${result.iterations} iterations.`);
        if (round >= options.warmup) {
          entry.samples.push(entry.last.live - started);
          entry.cpu.push((entry.last.cpu.user + entry.last.cpu.system) / 1000);
        }
      }
    }
  }
  return {
    rows: cases.map((entry) => ({
      iterations: entry.iterations,
      checkpoints: entry.checkpoints,
      segment: entry.log.segment !== undefined,
      logBytes: Buffer.byteLength(entry.log.text),
      recordsRead: entry.last.read?.records ?? 0,
      bytesRead: entry.last.read?.bytes ?? 0,
      ms: summarize(entry.samples),
      cpuMs: summarize(entry.cpu),
    })),
  };
}
