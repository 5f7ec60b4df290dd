/** Nothing here redacts: the runtime redacts secrets before anything reaches the machine. */
import type { LowSync } from 'lowdb';
import type { EffectLedger, ToolOutcome } from '../core/run.ts';
import type { ErrorData, JournalEntry, LoopEvent, TerminationReason } from '../core/loopEvent.ts';
import type { Message } from '../core/messages.ts';
import type { SavedBreaker } from '../resilience/circuitBreaker.ts';
import type { RunLock } from './lock.ts';
import { finalStatusOf, LOG_VERSION, type CheckpointRecord, type LogRecord, type ReplayRecord, type RunInput, type RunMeta, type RunStatus } from './records.ts';
import type { RunLog } from './runLog.ts';
import { StoreError } from './errors.ts';

interface RunIds {
  readonly runId: string;
  readonly agentId: string;
  readonly runIdJson: string;
  readonly agentIdJson: string;
}

/** Journal entries of one run, column by column: one `journal` record. */
export interface JournalColumns {
  readonly at: number;
  readonly sequence: number[];
  readonly elapsed: number[];
  readonly iteration: number[];
  readonly events: LoopEvent[];
}

/** Exactly `JSON.stringify` of the `journal` record, with the envelope a template around the ids encoded once. */
export function journalLine(columns: JournalColumns, ids: RunIds): string {
  const { at, sequence, elapsed, iteration, events } = columns;
  return (
    `{"v":${LOG_VERSION},"kind":"journal","runId":${ids.runIdJson},"agentId":${ids.agentIdJson},"at":${at},` +
    `"sequence":${JSON.stringify(sequence)},"elapsed":${JSON.stringify(elapsed)},"iteration":${JSON.stringify(iteration)},"events":${JSON.stringify(events)}}`
  );
}

function columnsAt(columns: JournalColumns, keep: readonly number[]): JournalColumns {
  return {
    at: columns.at,
    sequence: keep.map((i) => columns.sequence[i] as number),
    elapsed: keep.map((i) => columns.elapsed[i] as number),
    iteration: keep.map((i) => columns.iteration[i] as number),
    events: keep.map((i) => columns.events[i] as LoopEvent),
  };
}

function serialisable(value: unknown): boolean {
  try {
    JSON.stringify(value);
    return true;
  } catch {
    return false;
  }
}

export function journalEntries(records: readonly LogRecord[]): JournalEntry[] {
  const entries: JournalEntry[] = [];
  for (const record of records) {
    if (record.kind === 'journal') {
      const { runId, agentId, at, sequence, elapsed, iteration, events } = record;
      for (let i = 0; i < events.length; i++) {
        entries.push({ sequence: sequence[i] as number, timestamp: at + (elapsed[i] as number), agentId, runId, iteration: iteration[i] as number, event: events[i] as LoopEvent });
      }
    } else if (record.kind === 'event') entries.push(record.entry);
  }
  return entries;
}

export interface RunEnding {
  readonly resumable?: boolean;
  readonly error?: ErrorData;
}

/** Summed from the journal as it is written, from its first entry; `undefined` once an entry was missed. */
interface Totals {
  iterations: number;
  costUsd: number;
}

export type ReplyRecord = ReplayRecord extends infer R ? (R extends { v: unknown } ? Omit<R, 'v'> : never) : never;

export interface CheckpointPolicy {
  readonly every: number;
}

export interface CheckpointLink {
  readonly index: number;
  /** Where its line starts in the log, and its length (newline included), in bytes. */
  readonly at: number;
  readonly bytes: number;
  /** The conversation's length when it was taken: the messages it and its bases hold. */
  readonly messages: number;
}

export interface RestoredCheckpoint {
  readonly iteration: number;
  readonly conversation: readonly Message[];
  readonly chain: readonly CheckpointLink[];
}

/** `messages` is the whole conversation; the writer writes what its bases lack. */
export type CheckpointData = Pick<CheckpointRecord, 'iteration' | 'sequence' | 'snapshot' | 'stuck'> & { readonly messages: readonly Message[] };

export class RunWriter {
  #hasMetaFile: boolean;
  readonly #ids: RunIds;
  /**
 * Entries since the last write, for one `journal` line, appended before the `end` record and any
 * `event` record so those keep their place. Kept as columns so each entry object dies young.
 */
  #journal: JournalColumns | undefined;
  /** Made on first use: most runs never write one. */
  #metaDoc: LowSync<RunMeta> | undefined;
  #journalQueued = false;
  #lost: string | undefined;
  #onLost: ((reason: string) => void) | undefined;
  #checkpointedAt = 0;
  /** The last checkpoint and its bases, oldest first: those later ones can name as their base. */
  #chain: readonly CheckpointLink[] = [];
  #conversation: readonly Message[] = [];
  #messageJson: string[] = [];
  /** A checkpoint carries them past the records before it. */
  readonly #breakers = new Map<string, SavedBreaker>();
  /** `undefined` before the first entry, `null` when the writer did not see the run from its start. */
  #totals: Totals | null | undefined;

  constructor(
    readonly log: RunLog,
    private readonly openMetaDoc: () => LowSync<RunMeta>,
    private meta: RunMeta,
    private readonly lock: RunLock,
    hasMetaFile: boolean,
    readonly journalOnly = false,
    private readonly checkpoints?: CheckpointPolicy,
  ) {
    this.#hasMetaFile = hasMetaFile;
    this.#ids = { runId: meta.runId, agentId: meta.agentId, runIdJson: JSON.stringify(meta.runId), agentIdJson: JSON.stringify(meta.agentId) };
  }

  get runId(): string {
    return this.meta.runId;
  }

  get effects(): EffectLedger | undefined {
    return undefined;
  }

  get metaDoc(): LowSync<RunMeta> {
    if (this.#metaDoc === undefined) {
      this.#metaDoc = this.openMetaDoc();
      this.#metaDoc.data = this.meta;
    }
    return this.#metaDoc;
  }

  markLost(reason: string): void {
    if (this.#lost !== undefined) return;
    this.#lost = reason;
    this.#onLost?.(reason);
  }

  onLost(listener: (reason: string) => void): void {
    this.#onLost = listener;
    if (this.#lost !== undefined) listener(this.#lost);
  }

  event(entry: JournalEntry): void {
    this.#count(entry);
    const { timestamp } = entry;
    const journal = this.#journal;
    // Whole milliseconds (Date.now()) make `at + elapsed` exact; anything else keeps its own record.
    if (entry.runId === this.#ids.runId && entry.agentId === this.#ids.agentId && Number.isSafeInteger(timestamp)) {
      if (journal === undefined) {
        this.#journal = { at: timestamp, sequence: [entry.sequence], elapsed: [0], iteration: [entry.iteration], events: [entry.event] };
        return;
      }
      const elapsed = timestamp - journal.at;
      if (Number.isSafeInteger(elapsed)) {
        journal.sequence.push(entry.sequence);
        journal.elapsed.push(elapsed);
        journal.iteration.push(entry.iteration);
        journal.events.push(entry.event);
        return;
      }
    }
    this.#append({ v: LOG_VERSION, kind: 'event', entry });
  }

  /** A writer that resumed a run saw none of its earlier entries: it keeps no totals. */
  #count({ sequence, iteration, event }: JournalEntry): void {
    if (this.#totals === null) return;
    if (this.#totals === undefined) {
      if (sequence !== 0) {
        this.#totals = null;
        return;
      }
      this.#totals = { iterations: 0, costUsd: 0 };
    }
    this.#totals.iterations = event.type === 'run.terminated' ? event.iterations : iteration;
    if (event.type === 'reasoning.completed') this.#totals.costUsd += event.costUsd ?? 0;
  }

  #append(record: LogRecord): void {
    // Journal lines are now in the batch: the next one goes after them, not at its head.
    this.#journalQueued = true;
    try {
      this.#appendJournal();
    } finally {
      this.log.append(record);
    }
  }

  #appendJournal(): void {
    const { line, error } = this.#journalLine();
    if (line !== undefined) this.log.appendLine(line);
    if (error !== undefined) throw error;
  }

  /** Entries that cannot be serialised fail once, not on every later write. */
  #journalLine(): { line?: string; error?: unknown } {
    const journal = this.#journal;
    if (journal === undefined) return {};
    this.#journal = undefined;
    try {
      return { line: journalLine(journal, this.#ids) };
    } catch (error) {
      const writable = journal.events.flatMap((event, i) => (serialisable(event) ? [i] : []));
      return { ...(writable.length > 0 ? { line: journalLine(columnsAt(journal, writable), this.#ids) } : {}), error };
    }
  }

  /*
 * Journal entries buffered meanwhile become one line at the head of the next write, not a line
 * before each record: a write torn after some of its records still has them.
 */

  start(input: RunInput): void {
    this.log.append({ v: LOG_VERSION, kind: 'start', input });
  }

  /** In the order the machine took them. */
  reply(record: ReplyRecord): void {
    this.log.append({ v: LOG_VERSION, ...record } as LogRecord);
  }

  checkpointDue(iteration: number): boolean {
    const policy = this.checkpoints;
    // `end` last: a log computes it.
    return policy !== undefined && iteration >= this.#checkpointedAt + policy.every && this.#lost === undefined && this.log.end !== undefined;
  }

  /** Its `sequence` says the journal entries before it are there. */
  checkpoint(data: CheckpointData): void {
    const { messages, ...rest } = data;
    // The machine only appends to its conversation once hydrated. Should that ever change, a
    // conversation that is not the last checkpoint's and more starts a new chain, written whole.
    const previous = this.#conversation;
    const appended = messages.length >= previous.length && (previous.length === 0 || messages[previous.length - 1] === previous.at(-1));
    if (!appended) this.#messageJson = [];
    const index = appended ? (this.#chain.at(-1)?.index ?? 0) + 1 : 1;
    const baseIndex = index & (index - 1);
    const chain = this.#chain.filter((link) => link.index <= baseIndex);
    const base = chain.at(-1);
    const from = base?.messages ?? 0;
    // A message is in several checkpoints: it is serialised once, and its JSON kept.
    const json = this.#messageJson;
    for (let i = json.length; i < messages.length; i++) json.push(JSON.stringify(messages[i]));
    this.#journalQueued = true;
    this.#appendJournal();
    const at = this.log.end ?? 0;
    const breakers = this.#breakers.size === 0 ? {} : { breakers: [...this.#breakers.values()] };
    const head = JSON.stringify({ v: LOG_VERSION, kind: 'checkpoint', index, ...rest, ...breakers, from });
    const tail = base === undefined ? '' : `,"base":${JSON.stringify({ at: base.at, bytes: base.bytes })}`;
    const line = `${head.slice(0, -1)},"messages":[${json.slice(from).join(',')}]${tail}}`;
    this.log.appendLine(line);
    this.#chain = [...chain, { index, at, bytes: Buffer.byteLength(line) + 1, messages: messages.length }];
    this.#conversation = messages;
    this.#checkpointedAt = data.iteration;
  }

  restoredFrom(restored: RestoredCheckpoint): void {
    this.#checkpointedAt = restored.iteration;
    this.#conversation = restored.conversation;
    this.#messageJson = [];
    this.#chain = restored.chain;
  }

  breaker(saved: SavedBreaker): void {
    this.#breakers.set(saved.tool, saved);
    this.log.append({ v: LOG_VERSION, kind: 'breaker', ...saved });
  }

  carryBreakers(saved: readonly SavedBreaker[]): void {
    for (const state of saved) this.#breakers.set(state.tool, state);
  }

  /** The write-ahead record: flush before the call executes. */
  callStarted(key: string, tool: string, args: string): void {
    this.log.append({ v: LOG_VERSION, kind: 'call.started', key, tool, args });
  }

  callFinished(key: string, outcome: ToolOutcome): void {
    const { parts, ...rest } = outcome;
    this.log.append({ v: LOG_VERSION, kind: 'call.finished', key, outcome: parts === undefined ? rest : { ...rest, parts: [...parts] } });
  }

  /** Unserialisable journal entries are reported after everything else is written. */
  flushSync(): void {
    if (this.#lost !== undefined) throw this.#lostError();
    const { line, error } = this.#journalLine();
    if (line !== undefined && this.#journalQueued) this.log.appendLine(line);
    try {
      this.log.flushSync(this.#journalQueued ? undefined : line);
    } catch (failure) {
      // A checkpoint in the batch that failed is not in the log: the next one is written whole.
      this.#chain = [];
      throw failure;
    }
    this.#journalQueued = false;
    if (error !== undefined) throw error;
  }

  /** The journal's entries become a line only when the write starts: one line per write. */
  flushBehind(): Promise<void> {
    return this.log.flushBehind(this.#collectJournal);
  }

  readonly #collectJournal = (): void => this.#appendJournal();

  #lostError(): StoreError {
    return new StoreError('run_locked', `Run ${this.runId} was taken over by another process (${this.#lost ?? ''}); this one stopped writing it.`, {
      file: this.log.file,
      runId: this.runId,
    });
  }

  setStatus(status: RunStatus, reason?: TerminationReason, ending: RunEnding = {}): void {
    if (this.#lost !== undefined) throw this.#lostError();
    const { resumable: _r, error: _e, iterations: _i, costUsd: _c, ...rest } = this.meta;
    const ended = status !== 'running' && status !== 'awaiting_human';
    this.meta = {
      ...rest,
      status,
      updatedAt: Date.now(),
      ...(reason === undefined ? {} : { reason }),
      ...(ending.resumable === true ? { resumable: true } : {}),
      ...(ending.error === undefined ? {} : { error: ending.error }),
      ...(ended && this.#totals != null ? { iterations: this.#totals.iterations, costUsd: this.#totals.costUsd } : {}),
    };
    this.metaDoc.data = this.meta;
    this.metaDoc.write();
    this.#hasMetaFile = true;
  }

  /** The log's last line says how the run ended and whether it can be resumed. */
  end(reason: TerminationReason, ending: RunEnding = {}): void {
    if (this.#lost !== undefined) throw this.#lostError();
    const status = finalStatusOf(reason);
    // The run named right after the head: a segment's writer would otherwise name it there again.
    const record: LogRecord = {
      v: LOG_VERSION,
      kind: 'end',
      runId: this.meta.runId,
      status,
      reason,
      at: Date.now(),
      ...(ending.resumable === true ? { resumable: true as const } : {}),
      ...(ending.error === undefined ? {} : { error: ending.error }),
      ...(this.#totals == null ? {} : { iterations: this.#totals.iterations, costUsd: this.#totals.costUsd }),
    };
    try {
      // A journal-only log may have a background write in flight: `close` writes the end after it.
      if (this.journalOnly) this.#append(record);
      else {
        if (this.#journalQueued) this.#appendJournal();
        this.log.append(record);
        this.flushSync();
      }
    } finally {
      if (this.#hasMetaFile) this.setStatus(status, reason, ending);
    }
  }

  /** All three steps run even when the first fails. */
  async close(): Promise<void> {
    try {
      if (this.#lost !== undefined) {
        this.log.abandon();
        return;
      }
      let failure: unknown;
      try {
        if (this.journalOnly) this.#appendJournal();
        else this.flushSync();
      } catch (error) {
        failure = error;
      }
      await this.log.close();
      if (failure !== undefined) throw failure;
    } finally {
      this.lock.release();
    }
  }
}
