/**
 * The default store: one folder per run under `dir` (default `.actorloop/`), each holding
 * - `log.jsonl`  — the append-only run log (events, messages, snapshots, tool results),
 * - `meta.json`  — a small lowdb document with the run's status (the run index reads these),
 * - `lock`       — the single-writer lock while a process owns the run.
 * Nothing is shared between runs, so two processes never write the same file.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Low } from 'lowdb';
import type { Message } from '../conversation/messages.ts';
import type { JournalEntry, TerminationReason } from '../events/loopEvent.ts';
import { ConfigurationError } from '../errors.ts';
import type { ToolOutcome } from '../../machines/agent.types.ts';
import { DocumentFile } from './documentFile.ts';
import { RunFinishedError, RunNotFoundError } from './errors.ts';
import { acquireRunLock, type RunLock } from './lock.ts';
import { LOG_VERSION, META_VERSION, RUN_ID_PATTERN, RunMeta, type LogRecord, type RunStatus } from './records.ts';
import { readRunLog, RunLogWriter } from './runLog.ts';
import { packSnapshot, unpackSnapshot } from './snapshotCodec.ts';

export interface FileStoreOptions {
  /** Root folder. Default `.actorloop` in the working directory. */
  readonly dir?: string;
}

/** Applied to every message, snapshot and tool result before it is written (secret redaction). */
export type Redact = <T>(value: T) => T;

/** What a resumed run starts from. */
export interface RecoveredRun {
  readonly meta: RunMeta;
  /** The machine snapshot to restore, conversation included. */
  readonly snapshot: Record<string, unknown>;
  /** Completed tool calls by idempotency key: reused, never re-run. */
  readonly toolResults: ReadonlyMap<string, ToolOutcome>;
  /** Calls that had started without a recorded result (they may have had effects). */
  readonly startedTools: ReadonlySet<string>;
  readonly nextSequence: number;
  readonly iteration: number;
  readonly warnings: readonly string[];
}

export interface RunStore {
  readonly dir: string;
  /** Create a new run's files and take its lock. Throws RunLockedError if the run exists and is live. */
  createRun(init: { runId: string; agentId: string; task: string; redact?: Redact }): RunWriter;
  /** Lock an existing run and read what it needs to continue. */
  resumeRun(runId: string, options?: { redact?: Redact }): { writer: RunWriter; recovered: RecoveredRun };
  /** The run index: every run's metadata, newest first. */
  listRuns(): Promise<RunMeta[]>;
  getRun(runId: string): Promise<RunMeta | null>;
  /** The journal entries of a run, in order, for replay. */
  readJournal(runId: string): { entries: JournalEntry[]; warnings: string[] };
}

const identity = <T>(value: T): T => value;

/**
 * @example
 * ```ts
 * const agent = createAgent({ model, tools, store: createFileStore({ dir: '.actorloop' }) });
 * ```
 */
export function createFileStore(options: FileStoreOptions = {}): RunStore {
  const dir = resolve(options.dir ?? '.actorloop');
  const runsDir = join(dir, 'runs');
  const runDir = (runId: string) => {
    if (!RUN_ID_PATTERN.test(runId)) {
      throw new ConfigurationError(`Run id "${runId.slice(0, 64)}" is not usable as a folder name: use letters, digits, "_" and "-" (1–128).`);
    }
    return join(runsDir, runId);
  };
  const metaFile = (runId: string) => new DocumentFile(join(runDir(runId), 'meta.json'), RunMeta, META_VERSION);
  const metaDoc = (meta: RunMeta) => new Low<RunMeta>(metaFile(meta.runId), meta);

  return {
    dir,
    createRun({ runId, agentId, task, redact = identity }) {
      const folder = runDir(runId);
      mkdirSync(folder, { recursive: true });
      const lock = acquireRunLock(join(folder, 'lock'), runId);
      try {
        const logFile = join(folder, 'log.jsonl');
        if (existsSync(logFile)) {
          throw new ConfigurationError(`Run ${runId} already exists in ${dir}; resume it or pick a new run id.`);
        }
        writeFileSync(logFile, '', { flag: 'wx' });
        const now = Date.now();
        const meta: RunMeta = { v: META_VERSION, runId, agentId, task: redact(task.slice(0, 1000)), status: 'running', createdAt: now, updatedAt: now };
        metaFile(runId).writeSync(meta);
        return new RunWriter(new RunLogWriter(logFile), metaDoc(meta), meta, lock, redact, 0);
      } catch (error) {
        lock.release();
        throw error;
      }
    },

    resumeRun(runId, { redact = identity } = {}) {
      const folder = runDir(runId);
      const logFile = join(folder, 'log.jsonl');
      if (!existsSync(logFile)) throw new RunNotFoundError(`No run ${runId} in ${dir}.`, { file: logFile, runId });
      const lock = acquireRunLock(join(folder, 'lock'), runId);
      try {
        removeStrayTemp(folder);
        const doc = new DocumentFile(join(folder, 'meta.json'), RunMeta, META_VERSION);
        const meta = readMetaSync(doc, runId, logFile);
        if (meta.status === 'done' || meta.status === 'failed' || meta.status === 'cancelled') {
          throw new RunFinishedError(`Run ${runId} already ended (${meta.status}); start a new run instead.`, { file: doc.file, runId });
        }
        const log = readRunLog(logFile);
        const recovered = recover(log.records, meta, log.warnings, logFile);
        const writer = new RunWriter(
          new RunLogWriter(logFile, { truncateTo: log.validBytes }),
          metaDoc(meta),
          meta,
          lock,
          redact,
          unpackMessageCount(recovered.snapshot),
        );
        return { writer, recovered };
      } catch (error) {
        lock.release();
        throw error;
      }
    },

    async listRuns() {
      if (!existsSync(runsDir)) return [];
      const metas: RunMeta[] = [];
      for (const name of readdirSync(runsDir)) {
        if (!RUN_ID_PATTERN.test(name)) continue;
        const meta = await metaFile(name).read().catch(() => null);
        if (meta !== null) metas.push(meta);
      }
      return metas.sort((a, b) => b.createdAt - a.createdAt);
    },

    async getRun(runId) {
      return metaFile(runId).read();
    },

    readJournal(runId) {
      const logFile = join(runDir(runId), 'log.jsonl');
      if (!existsSync(logFile)) throw new RunNotFoundError(`No run ${runId} in ${dir}.`, { file: logFile, runId });
      const log = readRunLog(logFile);
      const entries: JournalEntry[] = [];
      for (const record of log.records) if (record.kind === 'event') entries.push(record.entry);
      return { entries, warnings: log.warnings };
    },
  };
}

/** A crash during an atomic write can leave lowdb's temp file behind; it never holds acknowledged data. */
function removeStrayTemp(folder: string): void {
  rmSync(join(folder, '.meta.json.tmp'), { force: true });
}

function readMetaSync(doc: DocumentFile<RunMeta>, runId: string, logFile: string): RunMeta {
  if (!existsSync(doc.file)) throw new RunNotFoundError(`Run ${runId} has a log but no meta.json; it never started properly.`, { file: logFile, runId });
  // Small document: a synchronous read keeps resume() synchronous like start().
  return doc.parse(readFileSync(doc.file, 'utf8'));
}

function unpackMessageCount(snapshot: Record<string, unknown>): number {
  const context = snapshot.context as { messages?: unknown[] } | undefined;
  return context?.messages?.length ?? 0;
}

function recover(records: readonly LogRecord[], meta: RunMeta, warnings: string[], file: string): RecoveredRun {
  const messages: Message[] = [];
  let snapshot: { packed: Record<string, unknown>; messageCount: number } | undefined;
  const toolResults = new Map<string, ToolOutcome>();
  const startedTools = new Set<string>();
  let nextSequence = 0;
  let iteration = 0;
  for (const record of records) {
    switch (record.kind) {
      case 'event':
        nextSequence = record.entry.sequence + 1;
        iteration = record.entry.iteration;
        break;
      case 'messages':
        messages.length = Math.min(messages.length, record.from);
        for (const m of record.messages) messages.push(m);
        break;
      case 'snapshot':
        snapshot = { packed: record.snapshot, messageCount: record.messageCount };
        break;
      case 'tool_started':
        startedTools.add(record.key);
        break;
      case 'tool_result':
        toolResults.set(record.key, record.outcome);
        startedTools.delete(record.key);
        break;
    }
  }
  if (snapshot === undefined) {
    throw new RunNotFoundError(`Run ${meta.runId} has no persisted snapshot in ${file}; it cannot be resumed.`, { file, runId: meta.runId });
  }
  return {
    meta,
    snapshot: unpackSnapshot(snapshot.packed, messages.slice(0, snapshot.messageCount)),
    toolResults,
    startedTools,
    nextSequence,
    iteration,
    warnings,
  };
}

/** Writes one run: buffered log records, flushed at phase boundaries; status in meta.json. */
export class RunWriter {
  #persistedMessages: number;
  #lastMessage: Message | undefined;

  constructor(
    readonly log: RunLogWriter,
    readonly metaDoc: Low<RunMeta>,
    private meta: RunMeta,
    private readonly lock: RunLock,
    private readonly redact: <T>(value: T) => T,
    persistedMessages: number,
  ) {
    this.#persistedMessages = persistedMessages;
  }

  get runId(): string {
    return this.meta.runId;
  }

  event(entry: JournalEntry): void {
    this.log.append({ v: LOG_VERSION, kind: 'event', entry });
  }

  /** Record the machine snapshot; new messages go first as their own records. */
  snapshot(persisted: unknown, messages: readonly Message[]): void {
    const known = this.#persistedMessages;
    const rewritten = known > 0 && (messages.length < known || (this.#lastMessage !== undefined && messages[known - 1] !== this.#lastMessage));
    const from = rewritten ? 0 : known;
    if (from < messages.length) {
      this.log.append({ v: LOG_VERSION, kind: 'messages', from, messages: this.redact(messages.slice(from)) });
    }
    this.#persistedMessages = messages.length;
    this.#lastMessage = messages[messages.length - 1];
    this.log.append({ v: LOG_VERSION, kind: 'snapshot', messageCount: messages.length, snapshot: this.redact(packSnapshot(persisted)) });
  }

  toolStarted(key: string, tool: string): void {
    this.log.append({ v: LOG_VERSION, kind: 'tool_started', key, tool });
  }

  toolResult(key: string, outcome: ToolOutcome): void {
    this.log.append({ v: LOG_VERSION, kind: 'tool_result', key, outcome: this.redact(outcome) });
  }

  flush(): Promise<void> {
    return this.log.flush();
  }

  async setStatus(status: RunStatus, reason?: TerminationReason): Promise<void> {
    this.meta = { ...this.meta, status, updatedAt: Date.now(), ...(reason === undefined ? {} : { reason }) };
    this.metaDoc.data = this.meta;
    await this.metaDoc.write();
  }

  /** Flush, then release the run's lock. */
  async close(): Promise<void> {
    try {
      await this.log.close();
    } finally {
      this.lock.release();
    }
  }
}
