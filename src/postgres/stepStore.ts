/**
 * What a worker's agents write through during one step: lines stay in memory until the step's
 * transaction commits them. Outside a step there is nothing to write to: `agent.run()` queues runs.
 */
import { LowSync } from 'lowdb';
import { ConfigurationError } from '../core/errors.ts';
import { currentOwner } from '../persistence/lock.ts';
import { recover } from '../persistence/recover.ts';
import { lineKind, LOG_VERSION, META_VERSION, type CheckpointRecord, type LogRecord, type RunMeta, type RunStatus } from '../persistence/records.ts';
import type { RunLog } from '../persistence/runLog.ts';
import { RunWriter, type RunStore } from '../persistence/fileStore.ts';
import { journalEntries, type CheckpointData, type CheckpointLink, type ReplyRecord, type RestoredCheckpoint } from '../persistence/runWriter.ts';
import { checkpointPolicy } from '../persistence/checkpointLog.ts';
import type { JournalEntry, LoopEvent } from '../core/loopEvent.ts';
import { machineEventsIn } from '../run/replay.ts';
import type { EffectLedger, ToolOutcome } from '../core/run.ts';
import { StoreError } from '../persistence/errors.ts';

export class StepRun {
  /** Frozen once the step ends (`seal`). */
  readonly added: string[] = [];
  status: RunStatus = 'running';
  /** The step watches it to tell a run at rest from one at work. */
  progress = 0;
  effects: EffectLedger | undefined;
  #sealed = false;

  constructor(
    readonly runId: string,
    readonly agentId: string,
    readonly task: string,
    readonly createdAt: number,
    /** From its last checkpoint on, parsed. */
    readonly records: readonly LogRecord[],
    readonly seqs: readonly number[],
    readonly logLength: number,
  ) {}

  get sealed(): boolean {
    return this.#sealed;
  }

  flush: () => void = () => undefined;
  /**
   * The last journal entry a replay of what is committed with it will not emit again: those before the run's last
   * durable record, and the machine's own events after it up to its next reason phase (a replay skips as many as the journal holds).
   */
  settledSequence = Number.NEGATIVE_INFINITY;

  /**
 * What a run writes after the step decided to end is not its history: journal entries after the last
 * durable record (the next step redoes that work) and write-ahead records of calls in flight (their
 * effects' rows say so) are dropped. A run waiting for a human keeps everything it journaled.
 */
  seal(inFlight: ReadonlySet<string> = new Set(), waitsForHuman = false): void {
    if (this.#sealed) return;
    this.flush();
    this.#sealed = true;
    const { kept } = cutLines(this.added, inFlight, waitsForHuman ? Number.POSITIVE_INFINITY : this.settledSequence);
    this.added.splice(0, this.added.length, ...kept);
  }

  /** What `seal` would drop stays in `added`, for the next step to commit: a replay here does not redo it. */
  take(inFlight: ReadonlySet<string>, waitsForHuman: boolean): string[] {
    this.flush();
    const { kept, deferred } = cutLines(this.added, inFlight, waitsForHuman ? Number.POSITIVE_INFINITY : this.settledSequence);
    this.added.splice(0, this.added.length, ...deferred);
    this.written += kept.length;
    return kept;
  }

  written = 0;

  append(line: string): void {
    if (this.#sealed) return;
    this.added.push(line);
    this.progress++;
    this.changed();
  }

  #waiters: (() => void)[] = [];

  /** Resolves once the run writes, journals or asks for something: a step waits on it instead of polling a run at work. */
  nextChange(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  changed(): void {
    if (this.#waiters.length === 0) return;
    for (const wake of this.#waiters.splice(0)) wake();
  }

  meta(): RunMeta {
    return { v: META_VERSION, runId: this.runId, agentId: this.agentId, task: this.task, status: this.status, createdAt: this.createdAt, updatedAt: Date.now() };
  }
}

interface JournalLine {
  sequence: number[];
  elapsed: number[];
  iteration: number[];
  events: unknown[];
}

function cutLines(lines: readonly string[], inFlight: ReadonlySet<string>, cut: number): { kept: string[]; deferred: string[] } {
  const kept: string[] = [];
  const deferred: string[] = [];
  for (const line of lines) {
    const kind = lineKind(line);
    if (kind === 'call.started' && inFlight.size > 0 && inFlight.has((JSON.parse(line) as { key: string }).key)) deferred.push(line);
    else if (kind === 'journal') {
      const [settled, rest] = splitJournal(line, cut);
      if (settled !== undefined) kept.push(settled);
      if (rest !== undefined) deferred.push(rest);
    } else if (kind === 'event') {
      if ((JSON.parse(line) as { entry: { sequence: number } }).entry.sequence <= cut) kept.push(line);
      else deferred.push(line);
    } else kept.push(line);
  }
  return { kept, deferred };
}

/** Undefined where none is left. */
function splitJournal(line: string, cut: number): [string | undefined, string | undefined] {
  const sequences = journalSequences(line);
  if ((sequences.at(-1) ?? cut) <= cut) return [line, undefined];
  if ((sequences[0] ?? cut) > cut) return [undefined, line];
  const record = JSON.parse(line) as JournalLine;
  const keep = record.sequence.map((sequence) => sequence <= cut);
  const pick = <T>(column: T[], wanted: boolean): T[] => column.filter((_, index) => keep[index] === wanted);
  const part = (wanted: boolean): string =>
    JSON.stringify({ ...record, sequence: pick(record.sequence, wanted), elapsed: pick(record.elapsed, wanted), iteration: pick(record.iteration, wanted), events: pick(record.events, wanted) });
  return [part(true), part(false)];
}

const SEQUENCE_COLUMN = '"sequence":[';

/**
 * A journal line's sequences, in order, read without parsing its events: `journalLine` writes them before,
 * after ids that are JSON strings, within which every quote follows a backslash.
 */
export function journalSequences(line: string): number[] {
  const start = line.indexOf(SEQUENCE_COLUMN);
  const end = start < 0 ? -1 : line.indexOf(']', start);
  if (end < 0) return (JSON.parse(line) as JournalLine).sequence;
  return JSON.parse(line.slice(start + SEQUENCE_COLUMN.length - 1, end + 1)) as number[];
}

function stepLog(run: StepRun): RunLog {
  return {
    file: `postgres:actorloop.log/${run.runId}`,
    append: (record) => run.append(JSON.stringify(record)),
    appendLine: (json) => run.append(json),
    flush: async () => undefined,
    flushSync: (head) => {
      if (head !== undefined) run.append(head);
    },
    flushBehind: async (collect) => collect?.(),
    // A position that only grows: checkpoints name their bases by it.
    get end() {
      return run.logLength + run.written + run.added.length;
    },
    close: async () => undefined,
    abandon: () => run.seal(),
  };
}

class StepWriter extends RunWriter {
  #lastSequence = Number.NEGATIVE_INFINITY;
  /** Every entry since the last durable record is one a replay emits again, in order, and skips. */
  #machineOnly = true;
  constructor(
    private readonly run: StepRun,
    ...args: ConstructorParameters<typeof RunWriter>
  ) {
    super(...args);
  }
  override get effects(): EffectLedger | undefined {
    return this.run.effects;
  }
  override event(entry: JournalEntry): void {
    this.#lastSequence = entry.sequence;
    // A tool's result (`observations.collected`) is committed with its outcome, so a page has it before the next call streams.
    if (this.#machineOnly && replayedFirst(entry.event)) this.run.settledSequence = entry.sequence;
    else this.#machineOnly = false;
    super.event(entry);
    // Entries are batched into one line, so `progress` does not move: a phase entered is news all the same.
    this.run.changed();
  }
  override reply(record: ReplyRecord): void {
    this.#settle();
    super.reply(record);
  }
  override callFinished(key: string, outcome: ToolOutcome): void {
    this.#settle();
    super.callFinished(key, outcome);
  }
  #settle(): void {
    this.run.settledSequence = this.#lastSequence;
    this.#machineOnly = true;
  }
  /** A checkpoint holds every entry before it: a step that rests after it keeps them. */
  override checkpoint(data: CheckpointData): void {
    this.#settle();
    super.checkpoint(data);
  }
}

function stepWriter(run: StepRun): RunWriter {
  const meta = run.meta();
  const openMeta = () =>
    new LowSync<RunMeta>(
      {
        read: () => run.meta(),
        write: (data) => {
          if (!run.sealed) run.status = data.status;
        },
      },
      meta,
    );
  const writer = new StepWriter(run, stepLog(run), openMeta, meta, { file: '', gen: 0, release: () => undefined }, true, false, checkpointPolicy(undefined));
  run.flush = () => writer.flushSync();
  return writer;
}

export interface StepStore extends RunStore {
  begin(run: StepRun): void;
  end(runId: string): void;
}

export function createStepStore(): StepStore {
  const runs = new Map<string, StepRun>();
  const inStep = (runId: string | undefined, what: string): StepRun => {
    const run = runId === undefined ? undefined : runs.get(runId);
    if (run === undefined) {
      throw new ConfigurationError(
        `${what}: a durable agent's runs are queued (agent.run, start, call, sessions) and advanced by workers (runWorker); this store only answers inside a worker's step.`,
      );
    }
    return run;
  };
  return {
    dir: 'postgres',
    mode: 'resumable',
    begin: (run) => void runs.set(run.runId, run),
    end: (runId) => void runs.delete(runId),
    createRun({ runId, agentId, input }) {
      const run = inStep(runId, 'Starting a run outside a worker');
      run.append(JSON.stringify({ v: LOG_VERSION, kind: 'run', runId: run.runId, agentId, task: run.task.slice(0, 1000), createdAt: run.createdAt, owner: currentOwner() }));
      if (input !== undefined) run.append(JSON.stringify({ v: LOG_VERSION, kind: 'start', input }));
      return stepWriter(run);
    },
    resumeRun(runId) {
      const run = inStep(runId, 'Resuming a run outside a worker');
      const end = run.records.at(-1);
      if (end?.kind === 'end' && end.resumable !== true) {
        throw new StoreError('run_finished', `Run ${runId} already ended (${end.status}).`, { file: `postgres:actorloop.log/${runId}`, runId });
      }
      const recovered = { ...recover(run.records, run.meta(), [], `postgres:actorloop.log/${runId}`), continued: true as const };
      const writer = stepWriter(run);
      // The next checkpoint is due counting from the last one, and names its bases.
      const restored = restoredCheckpoint(run.records, run.seqs, recovered.checkpoint);
      if (restored !== undefined) writer.restoredFrom(restored);
      return { writer, recovered };
    },
    async listRuns() {
      return [...runs.values()].map((run) => run.meta());
    },
    async getRun(runId) {
      return runs.get(runId)?.meta() ?? null;
    },
    readJournal(runId, { after } = {}) {
      const run = inStep(runId, 'Reading a durable run\'s journal synchronously');
      // A step reads its run from the last checkpoint on: the journal before it is not in hand.
      if (run.seqs[0] !== 0) throw new ConfigurationError(`A step does not hold all of run ${runId}'s journal: read it with runtime.journal(runId).`);
      const entries = journalEntries(run.records);
      return { entries: after === undefined ? entries : entries.filter((entry) => entry.sequence > after), warnings: [] };
    },
    // A step's run is held by the worker running the step.
    ownerGone: () => false,
  };
}

function restoredCheckpoint(records: readonly LogRecord[], seqs: readonly number[], last: CheckpointRecord | undefined): RestoredCheckpoint | undefined {
  if (last === undefined) return undefined;
  const lines = new Map<number, { readonly record: CheckpointRecord; readonly at: number }>();
  records.forEach((record, i) => {
    if (record.kind === 'checkpoint') lines.set(record.index, { record, at: seqs[i] ?? i });
  });
  const chain: CheckpointLink[] = [];
  for (let index = last.index; index > 0; index &= index - 1) {
    const found = lines.get(index);
    if (found === undefined) break;
    chain.unshift({ index, at: found.at, bytes: 1, messages: found.record.from + found.record.messages.length });
  }
  return { iteration: last.iteration, conversation: last.messages, chain };
}

/**
 * The machine's own events, counted as a replay counts them (an elicitation's wait and answer are the runtime's),
 * up to a reason phase's entry: a replay that skips it takes the turn before it as ended, hooks included.
 */
function replayedFirst(event: LoopEvent): boolean {
  if (event.type === 'phase.entered' && event.phase === 'reason') return false;
  const kind = (event as { kind?: unknown }).kind;
  return machineEventsIn(new Map([[kind === 'elicitation' ? `${event.type}:elicitation` : event.type, 1]])) === 1;
}
