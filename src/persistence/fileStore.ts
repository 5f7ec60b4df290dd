/**
 * The default store: under `dir/runs/` (default `.actorloop/runs/`), for each run
 * - `<runId>.jsonl`     — the append-only run log: a `run` header (who created it, for what
 *                         task), then events, messages, snapshots and tool results, and last an
 *                         `end` record (how it ended),
 * - `<runId>.meta.json` — a small lowdb document with the run's status, written when the run
 *                         first waits for a human and kept current from then on; a run that
 *                         never waits has none: its header and `end` record say it all,
 * - `<runId>.lock`      — taken by a resume while it writes the run (a new run is owned through
 *                         the pid in its header: the log is created exclusively).
 * A resumable run shares no file with any other, so two processes never write the same file. A new run costs
 * one file creation and nothing at its end but the last append: creating files is what persisting
 * a short run costs most (a folder per run and an atomic meta.json write at its end were two more
 * creations and a rename, about a quarter of a react-10 run's time on our CI's disk). Runs written
 * by earlier versions, one folder each (`<runId>/log.jsonl`, `meta.json`, `lock`), are still
 * listed, read and resumed in place. A journal-only store (`mode: 'journal'`) writes only the
 * header, the journal and the end of a run, appended in the background: for a run id it picks,
 * to a segment shared with its other runs in this process, `journal/<segmentId>.jsonl` (see
 * journalSegment.ts), which spares each run even that one file creation; for a run id it is
 * given, to the run's own log in `runs/`, whose exclusive creation is what keeps the id unique.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { LowSync, type SyncAdapter } from 'lowdb';
import type { Message } from '../conversation/messages.ts';
import type { JournalEntry, LoopEvent, TerminationReason } from '../events/loopEvent.ts';
import { ConfigurationError } from '../errors.ts';
import type { ToolOutcome } from '../../machines/agent.types.ts';
import { DocumentFile } from './documentFile.ts';
import { CorruptFileError, RunFinishedError, RunLockedError, RunNotFoundError, RunNotResumableError } from './errors.ts';
import { acquireRunLock, currentOwner, heldInThisProcess, holdCreatedRun, ownerIsLive, type RunLock } from './lock.ts';
import {
  finalStatusOf,
  isFinalStatus,
  LOG_VERSION,
  META_VERSION,
  newRunId,
  RUN_ID_PATTERN,
  RunMeta,
  type FinalStatus,
  type LogRecord,
  type RunEndRecord,
  type RunHeaderRecord,
  type RunStatus,
} from './records.ts';
import { JournalSegments, segmentFile, segmentIdOf, type SegmentLimits } from './journalSegment.ts';
import { readRunEnd, readRunHeader, readRunLog, RunLogWriter, type RunLog } from './runLog.ts';
import { applyContextDelta, contextDelta, isObject, packSnapshot, unpackSnapshot } from './snapshotCodec.ts';

export interface FileStoreOptions {
  /** Root folder. Default `.actorloop` in the working directory. */
  readonly dir?: string;
  /**
   * What a run's log holds.
   * - `'resumable'` (default): the journal, plus the conversation, a snapshot per iteration and
   *   every tool result, appended synchronously at each phase boundary, so a run killed at any
   *   point resumes without re-running completed tool calls.
   * - `'journal'`: the journal only (every event of the run, and how it ended), appended in the
   *   background. Runs are listed and replayed (`readJournal`) like any other, and cost far less
   *   per iteration, but cannot be resumed (`RunNotResumableError`). A completed run's journal is
   *   complete; a crash loses at most the entries of the write in flight and those queued after
   *   it, and never corrupts what was written. A run enters the index with its first write,
   *   moments after it starts (until then its file may be missing or empty). Runs whose ids the
   *   store picks share segment files (`journal/`), which spares each run a file of its own.
   */
  readonly mode?: 'resumable' | 'journal';
  /** When a journal-only store starts a new segment: its size, and how long it stays open unused. */
  readonly journalSegments?: Partial<SegmentLimits>;
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
  /**
   * Create a new run's files and take its lock. Throws RunLockedError if the run exists and is
   * live. Without `runId` the store picks a new one (the writer's `runId` says which): a random
   * `run_<uuid>`, whose existence checks (a stat each) are skipped; in a journal-only store,
   * `run_<segmentId>_<n>`, a run of the store's current journal segment. A given `runId` is
   * checked, and the exclusive create never overwrites a file.
   */
  createRun(init: { runId?: string; agentId: string; task: string; redact?: Redact }): RunWriter;
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
  const mode = options.mode ?? 'resumable';
  if (mode !== 'resumable' && mode !== 'journal') {
    throw new ConfigurationError(`createFileStore: mode must be 'resumable' or 'journal', not ${JSON.stringify(mode)}.`);
  }
  const journalOnly = mode === 'journal';
  const runsDir = join(dir, 'runs');
  let runsDirMade = false;
  const checkId = (runId: string): void => {
    if (!RUN_ID_PATTERN.test(runId)) {
      throw new ConfigurationError(`Run id "${runId.slice(0, 64)}" is not usable as a file name: use letters, digits, "_" and "-" (1–128).`);
    }
  };
  const journalDir = join(dir, 'journal');
  const segments = new JournalSegments(journalDir, segmentLimits(options.journalSegments));
  /**
   * Where a run's files are: its own folder if an earlier version made one, else side by side
   * in `runs/`; a run a journal-only store named has its log in a segment (`segment` is set, and
   * `log` is the segment's file) and nothing in `runs/` but, once it waits for a human, meta.json.
   */
  const locate = (runId: string): RunPaths => {
    checkId(runId);
    const folder = join(runsDir, runId);
    if (existsSync(folder)) return folderPaths(folder);
    const paths = flatPaths(runsDir, runId);
    const segmentId = segmentIdOf(runId);
    if (segmentId === undefined || existsSync(paths.log)) return paths;
    return { ...paths, log: segmentFile(journalDir, segmentId), segment: true };
  };
  const metaFile = (paths: RunPaths) => new DocumentFile(paths.meta, RunMeta, META_VERSION);

  /**
   * meta.json when the run has one, else what its log's header says; then, unless meta.json
   * already says it ended, the log's `end` record if it has one.
   */
  const readMeta = (runId: string): RunMeta | null => {
    const paths = locate(runId);
    if (paths.segment === true) return readSegmentMeta(paths, runId);
    const doc = metaFile(paths);
    const logFile = paths.log;
    const hasLog = existsSync(logFile);
    let meta = readStoredMeta(doc);
    if (meta === undefined) {
      const header = hasLog ? readRunHeader(logFile) : null;
      if (header === null) return null;
      meta = metaFromHeader(header);
    }
    if (!hasLog || isFinalStatus(meta.status)) return meta;
    const end = readRunEnd(logFile);
    return end === null ? meta : endedMeta(meta, end);
  };

  /** A segment run's meta.json if it has one, else its header, with its `end` record applied. */
  const readSegmentMeta = (paths: RunPaths, runId: string, records = existsSync(paths.log) ? segmentRecords(paths.log, runId).records : []): RunMeta | null => {
    let meta = readStoredMeta(metaFile(paths));
    const header = records.find((record) => record.kind === 'run');
    if (meta === undefined) {
      if (header === undefined) return null;
      meta = metaFromHeader(header);
    }
    if (isFinalStatus(meta.status)) return meta;
    const end = records.find((record) => record.kind === 'end');
    return end === undefined ? meta : endedMeta(meta, end);
  };

  /** A new run of the current journal segment (a journal-only store, picking the id): its header goes first. */
  const createSegmentRun = (agentId: string, task: string, redact: Redact): RunWriter => {
    const { runId, log } = segments.openRun();
    const header = runHeader(runId, agentId, task, redact, true);
    log.append(header);
    const openMetaDoc = () => {
      // Only a run that waits for a human has one; `runs/` may not exist yet.
      mkdirSync(runsDir, { recursive: true });
      return metaDoc(metaFile(flatPaths(runsDir, runId)));
    };
    return new RunWriter(log, openMetaDoc, metaFromHeader(header), NO_LOCK, redact, 0, false, true);
  };

  /** Every run in every segment: headers and ends only (journal lines are not parsed). */
  const listSegmentRuns = (): RunMeta[] => {
    if (!existsSync(journalDir)) return [];
    const metas: RunMeta[] = [];
    for (const name of readdirSync(journalDir)) {
      if (!name.endsWith(LOG_SUFFIX)) continue;
      let records: LogRecord[];
      try {
        records = readSegment(join(journalDir, name), notJournal).records;
      } catch {
        continue; // A corrupt segment does not hide the other segments; getRun(runId) reports it.
      }
      const byRun = new Map<string, LogRecord[]>();
      for (const record of records) {
        const runId = runIdOf(record);
        if (runId === undefined) continue;
        const own = byRun.get(runId);
        if (own === undefined) byRun.set(runId, [record]);
        else own.push(record);
      }
      for (const [runId, own] of byRun) {
        if (!RUN_ID_PATTERN.test(runId)) continue;
        let meta: RunMeta | null = null;
        try {
          meta = readSegmentMeta({ ...flatPaths(runsDir, runId), log: join(journalDir, name), segment: true }, runId, own);
        } catch {
          // A corrupt meta.json does not hide the others; getRun(runId) reports it.
        }
        if (meta !== null) metas.push(meta);
      }
    }
    return metas;
  };

  return {
    dir,
    createRun({ runId: givenId, agentId, task, redact = identity }) {
      if (journalOnly && givenId === undefined) return createSegmentRun(agentId, task, redact);
      const freshId = givenId === undefined;
      const runId = givenId ?? newRunId();
      if (!freshId) checkId(runId);
      if (!freshId && segmentIdOf(runId) !== undefined) {
        throw new ConfigurationError(`Run id "${runId}" has the form of the ids a journal-only store picks (run_seg-…_n); pick another, or let the store pick one.`);
      }
      if (!runsDirMade) {
        mkdirSync(runsDir, { recursive: true });
        runsDirMade = true;
      }
      const paths = flatPaths(runsDir, runId);
      const logFile = paths.log;
      // A run of an earlier version has a folder instead: the same id is taken all the same.
      if (!freshId) {
        const folder = join(runsDir, runId);
        if (existsSync(folder)) throw existingRunError(folderPaths(folder), runId, dir);
      }
      // A journal's file may still be in creation (see below), and its header unwritten.
      if (heldInThisProcess(logFile)) {
        throw new RunLockedError(`Run ${runId} is already being written by process ${process.pid} (this process); pick a new run id.`, { file: logFile, runId });
      }
      // A journal is written in the background, so its file is created there too: an existing
      // run is caught here, now; one created in the meantime fails the journal's writes.
      if (journalOnly && !freshId && existsSync(logFile)) throw existingRunError(paths, runId, dir);
      let log: RunLogWriter;
      try {
        log = new RunLogWriter(logFile, { create: journalOnly ? 'background' : true, fresh: freshId });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        throw existingRunError(paths, runId, dir);
      }
      const claim = holdCreatedRun(logFile);
      try {
        const header = runHeader(runId, agentId, task, redact, journalOnly);
        log.append(header);
        // Written at once: from here on other processes see who owns the run. (A journal's
        // header goes with its first background write; a journal-only run is never resumed.)
        if (!journalOnly) log.flushSync();
        return new RunWriter(log, () => metaDoc(metaFile(paths)), metaFromHeader(header), claim, redact, 0, false, journalOnly);
      } catch (error) {
        claim.release();
        throw error;
      }
    },

    resumeRun(runId, { redact = identity } = {}) {
      if (journalOnly) {
        throw new ConfigurationError(
          `Cannot resume run ${runId.slice(0, 128)}: this store writes journals only (mode 'journal'), which hold no snapshots. Resume with createFileStore({ mode: 'resumable' }).`,
        );
      }
      const paths = locate(runId);
      const logFile = paths.log;
      if (!existsSync(logFile)) throw new RunNotFoundError(`No run ${runId} in ${dir}.`, { file: logFile, runId });
      if (paths.segment === true) {
        if (readSegmentMeta(paths, runId) === null) throw new RunNotFoundError(`No run ${runId} in ${dir}.`, { file: logFile, runId });
        throw notResumable(runId, logFile);
      }
      const lock = acquireRunLock(paths.lock, runId);
      try {
        // A crash during an atomic write can leave lowdb's temp file behind; it never holds acknowledged data.
        rmSync(paths.temp, { force: true });
        const doc = metaFile(paths);
        const storedMeta = readStoredMeta(doc);
        if (storedMeta !== undefined && isFinalStatus(storedMeta.status)) throw finishedError(runId, storedMeta.status, doc.file);
        const log = readRunLog(logFile);
        const end = log.records.at(-1);
        if (end?.kind === 'end') throw finishedError(runId, end.status, logFile);
        const header = log.records[0]?.kind === 'run' ? log.records[0] : undefined;
        if (header !== undefined && ownerIsLive(header.owner, logFile)) throw lockedBy(header, logFile, runId);
        if (header?.journalOnly === true) throw notResumable(runId, logFile);
        const meta = storedMeta ?? (header === undefined ? undefined : metaFromHeader(header));
        if (meta === undefined) {
          throw new RunNotFoundError(`Run ${runId} has a log but no meta.json and no header; it never started properly.`, { file: logFile, runId });
        }
        const recovered = recover(log.records, meta, log.warnings, logFile);
        const writer = new RunWriter(
          new RunLogWriter(logFile, { truncateTo: log.validBytes }),
          () => metaDoc(doc),
          meta,
          lock,
          redact,
          unpackMessageCount(recovered.snapshot),
          storedMeta !== undefined,
        );
        return { writer, recovered };
      } catch (error) {
        lock.release();
        throw error;
      }
    },

    async listRuns() {
      const metas: RunMeta[] = [];
      if (!existsSync(runsDir)) return listSegmentRuns();
      const listed = new Set<string>();
      for (const name of readdirSync(runsDir)) {
        // `<runId>.jsonl`, or the folder `<runId>` of an earlier version; not locks, metadata, temp
        // files, except the meta.json of a segment's run (its header may not be written yet).
        const runId = name.endsWith(LOG_SUFFIX)
          ? name.slice(0, -LOG_SUFFIX.length)
          : name.endsWith(META_SUFFIX) && segmentIdOf(name.slice(0, -META_SUFFIX.length)) !== undefined
            ? name.slice(0, -META_SUFFIX.length)
            : name;
        if (!RUN_ID_PATTERN.test(runId)) continue;
        listed.add(runId);
        let meta: RunMeta | null = null;
        try {
          meta = readMeta(runId);
        } catch {
          // A corrupt run does not hide the others; getRun(runId) reports it.
        }
        if (meta !== null) metas.push(meta);
      }
      for (const meta of listSegmentRuns()) if (!listed.has(meta.runId)) metas.push(meta);
      return metas.sort((a, b) => b.createdAt - a.createdAt);
    },

    async getRun(runId) {
      return readMeta(runId);
    },

    readJournal(runId) {
      const paths = locate(runId);
      const logFile = paths.log;
      if (!existsSync(logFile)) throw new RunNotFoundError(`No run ${runId} in ${dir}.`, { file: logFile, runId });
      if (paths.segment === true) {
        const { records, warnings } = segmentRecords(logFile, runId);
        if (!records.some((record) => record.kind === 'run')) throw new RunNotFoundError(`No run ${runId} in ${logFile}.`, { file: logFile, runId });
        return { entries: journalEntries(records), warnings };
      }
      const log = readRunLog(logFile);
      return { entries: journalEntries(log.records), warnings: log.warnings };
    },
  };
}

/** The files of one run. */
interface RunPaths {
  readonly log: string;
  readonly meta: string;
  readonly lock: string;
  /** lowdb's temp file for `meta` (steno names it `.<name>.tmp` beside it). */
  readonly temp: string;
  /** `log` is a journal segment, shared with other runs. */
  readonly segment?: true;
}

const LOG_SUFFIX = '.jsonl';
const META_SUFFIX = '.meta.json';

/** `runsDir` is normalised (made with `join`) and a run id is a plain file name: no `join` needed. */
function flatPaths(runsDir: string, runId: string): RunPaths {
  const base = `${runsDir}${sep}`;
  return {
    log: `${base}${runId}${LOG_SUFFIX}`,
    meta: `${base}${runId}${META_SUFFIX}`,
    lock: `${base}${runId}.lock`,
    temp: `${base}.${runId}.meta.json.tmp`,
  };
}

function folderPaths(folder: string): RunPaths {
  return { log: join(folder, 'log.jsonl'), meta: join(folder, 'meta.json'), lock: join(folder, 'lock'), temp: join(folder, '.meta.json.tmp') };
}

/** meta.json when the run has one (only a missing file is `undefined`; a bad one throws). */
function readStoredMeta(doc: DocumentFile<RunMeta>): RunMeta | undefined {
  return existsSync(doc.file) ? doc.parse(readFileSync(doc.file, 'utf8')) : undefined;
}

function segmentLimits(limits: Partial<SegmentLimits> = {}): Partial<SegmentLimits> {
  for (const key of ['maxChars', 'idleMs'] as const) {
    const value: unknown = limits[key];
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)) {
      throw new ConfigurationError(`createFileStore: journalSegments.${key} must be a positive number, not ${JSON.stringify(value)}.`);
    }
  }
  return limits;
}

/** A run of a segment holds no lock: its id is new, and nobody else writes its segment. */
const NO_LOCK: RunLock = { file: '', release: () => undefined };

function runHeader(runId: string, agentId: string, task: string, redact: Redact, journalOnly: boolean): RunHeaderRecord {
  return {
    v: LOG_VERSION,
    kind: 'run',
    runId,
    agentId,
    task: redact(task.slice(0, 1000)),
    createdAt: Date.now(),
    owner: currentOwner(),
    ...(journalOnly ? { journalOnly: true as const } : {}),
  };
}

function notResumable(runId: string, file: string): RunNotResumableError {
  return new RunNotResumableError(
    `Run ${runId} was written by a journal-only store (mode 'journal'): its log holds the journal but no snapshots, so it cannot be resumed. Read it with readJournal('${runId}').`,
    { file, runId },
  );
}

/** The run a record belongs to (every record a segment holds names it). */
function runIdOf(record: LogRecord): string | undefined {
  if (record.kind === 'event') return record.entry.runId;
  return 'runId' in record ? record.runId : undefined;
}

/** Lines of a segment that may hold a record of `runId`: every record of a run holds its id as written. */
const mentions = (runId: string) => {
  const needle = `"runId":${JSON.stringify(runId)}`;
  return (line: string): boolean => line.includes(needle);
};

/** The records of one run in a segment (a lookup by its id, only lines that mention it parsed). */
function segmentRecords(file: string, runId: string): { records: LogRecord[]; warnings: string[] } {
  const { records, warnings } = readSegment(file, mentions(runId));
  return { records: records.filter((record) => runIdOf(record) === runId), warnings };
}

/** A segment's lines that `select` accepts. A segment is empty from its creation to its first write. */
function readSegment(file: string, select: (line: string) => boolean): { records: LogRecord[]; warnings: string[] } {
  return statSync(file).size === 0 ? { records: [], warnings: [] } : readRunLog(file, select);
}

/** Lines of a segment other than journal entries (`journal`, `events`, `event`): what an index needs. */
const notJournal = (line: string): boolean => !/^\{"v":\d+,"kind":"(?:journal|events?)"/.test(line);

function finishedError(runId: string, status: FinalStatus, file: string): RunFinishedError {
  return new RunFinishedError(`Run ${runId} already ended (${status}); start a new run instead.`, { file, runId });
}

function endedMeta(meta: RunMeta, end: RunEndRecord): RunMeta {
  return { ...meta, status: end.status, reason: end.reason, updatedAt: end.at };
}

function metaFromHeader(header: RunHeaderRecord): RunMeta {
  const { runId, agentId, task, createdAt } = header;
  return { v: META_VERSION, runId, agentId, task, status: 'running', createdAt, updatedAt: createdAt };
}

/** The run's meta.json as a lowdb document, written synchronously (a few hundred bytes, atomically). */
function metaDoc(doc: DocumentFile<RunMeta>): LowSync<RunMeta> {
  const adapter: SyncAdapter<RunMeta> = {
    read: () => (existsSync(doc.file) ? doc.parse(readFileSync(doc.file, 'utf8')) : null),
    write: (data) => doc.writeSync(data),
  };
  return new LowSync<RunMeta>(adapter, { v: META_VERSION, runId: '', agentId: '', task: '', status: 'running', createdAt: 0, updatedAt: 0 });
}

function lockedBy(header: RunHeaderRecord, file: string, runId: string): RunLockedError {
  const { pid } = header.owner;
  return new RunLockedError(
    `Run ${runId} is already being written by process ${pid}${pid === process.pid ? ' (this process)' : ''}. ` +
      'Wait for it to finish or stop it; two writers would interleave the journal.',
    { file, runId },
  );
}

/** Why a run id that already has a log cannot be created again. */
function existingRunError(paths: RunPaths, runId: string, dir: string): Error {
  // A resume holding the lock, or the creator named in the header, may still be writing it.
  try {
    acquireRunLock(paths.lock, runId).release();
    const header = existsSync(paths.log) ? readRunHeader(paths.log) : null;
    if (header !== null && ownerIsLive(header.owner, paths.log)) return lockedBy(header, paths.log, runId);
  } catch (error) {
    return error as Error;
  }
  return new ConfigurationError(`Run ${runId} already exists in ${dir}; resume it or pick a new run id.`);
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
      case 'journal': {
        const last = record.events.length - 1;
        if (last >= 0) [nextSequence, iteration] = [(record.sequence[last] as number) + 1, record.iteration[last] as number];
        break;
      }
      case 'events': {
        const last = record.entries.at(-1);
        if (last !== undefined) [nextSequence, iteration] = [last[0] + 1, last[2]];
        break;
      }
      case 'messages':
        messages.length = Math.min(messages.length, record.from);
        for (const m of record.messages) messages.push(m);
        break;
      case 'snapshot':
        if (record.delta === true && snapshot === undefined) {
          throw new CorruptFileError(`${file}: a snapshot delta has no snapshot before it. It was left untouched.`, { file });
        }
        snapshot = {
          packed: record.delta === true && snapshot !== undefined ? applyContextDelta(snapshot.packed, record.snapshot) : record.snapshot,
          messageCount: record.messageCount,
        };
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

/** A run's ids, and their JSON, encoded once per writer. */
interface RunIds {
  readonly runId: string;
  readonly agentId: string;
  readonly runIdJson: string;
  readonly agentIdJson: string;
}

/** Journal entries of one run, column by column: one `journal` record. */
export interface JournalColumns {
  /** The first entry's timestamp; `elapsed` counts from it. */
  readonly at: number;
  readonly sequence: number[];
  readonly elapsed: number[];
  readonly iteration: number[];
  readonly events: LoopEvent[];
}

/**
 * The log line of a `journal` record: exactly `JSON.stringify({ v, kind: 'journal', runId,
 * agentId, at, sequence, elapsed, iteration, events })`, with the envelope a template around the
 * run's ids encoded once. The three number columns are arrays of small integers, which
 * JSON.stringify writes fastest; `at` is an integer, written the same by a template.
 */
export function journalLine(columns: JournalColumns, ids: RunIds): string {
  const { at, sequence, elapsed, iteration, events } = columns;
  return (
    `{"v":${LOG_VERSION},"kind":"journal","runId":${ids.runIdJson},"agentId":${ids.agentIdJson},"at":${at},` +
    `"sequence":${JSON.stringify(sequence)},"elapsed":${JSON.stringify(elapsed)},"iteration":${JSON.stringify(iteration)},"events":${JSON.stringify(events)}}`
  );
}

/** The entries at `keep` of `columns`. */
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

/** A run's journal entries from its `journal`, `events` and `event` records, in order. */
export function journalEntries(records: readonly LogRecord[]): JournalEntry[] {
  const entries: JournalEntry[] = [];
  for (const record of records) {
    if (record.kind === 'journal') {
      const { runId, agentId, at, sequence, elapsed, iteration, events } = record;
      for (let i = 0; i < events.length; i++) {
        entries.push({ sequence: sequence[i] as number, timestamp: at + (elapsed[i] as number), agentId, runId, iteration: iteration[i] as number, event: events[i] as LoopEvent });
      }
    } else if (record.kind === 'events') {
      const { runId, agentId } = record;
      for (const [sequence, timestamp, iteration, event] of record.entries) entries.push({ sequence, timestamp, agentId, runId, iteration, event });
    } else if (record.kind === 'event') entries.push(record.entry);
  }
  return entries;
}

/** Writes one run: buffered log records, flushed at phase boundaries; status in meta.json. */
export class RunWriter {
  #persistedMessages: number;
  #lastMessage: Message | undefined;
  /** Whether meta.json exists: once it does, every status change is written to it. */
  #hasMetaFile: boolean;
  readonly #ids: RunIds;
  /** The context of the last snapshot record this writer appended (unredacted, as the machine had it). */
  #lastContext: Record<string, unknown> | undefined;
  /**
   * Journal entries since the last other record, for one `journal` record: one line for the
   * ten-odd events of a phase (of every phase since the last write, in a journal-only log)
   * instead of one each. Appended before any other record and at every flush, so the log keeps
   * the order in which things happened. Kept as columns from the start, not as the entry
   * objects: an entry then dies young, as it does in the in-memory journal, instead of living
   * (with its boxed timestamp) until the line is made, through the collections in between.
   */
  #journal: JournalColumns | undefined;
  /** meta.json as a lowdb document, made on first use: most runs never write one. */
  #metaDoc: LowSync<RunMeta> | undefined;

  constructor(
    readonly log: RunLog,
    private readonly openMetaDoc: () => LowSync<RunMeta>,
    private meta: RunMeta,
    private readonly lock: RunLock,
    private readonly redact: <T>(value: T) => T,
    persistedMessages: number,
    hasMetaFile: boolean,
    /** The log holds the journal only: `flushBehind` writes it, and the end record is written at `close`. */
    readonly journalOnly = false,
  ) {
    this.#persistedMessages = persistedMessages;
    this.#hasMetaFile = hasMetaFile;
    this.#ids = { runId: meta.runId, agentId: meta.agentId, runIdJson: JSON.stringify(meta.runId), agentIdJson: JSON.stringify(meta.agentId) };
  }

  get runId(): string {
    return this.meta.runId;
  }

  /** The run's meta.json, holding the run's current metadata. */
  get metaDoc(): LowSync<RunMeta> {
    if (this.#metaDoc === undefined) {
      this.#metaDoc = this.openMetaDoc();
      this.#metaDoc.data = this.meta;
    }
    return this.#metaDoc;
  }

  event(entry: JournalEntry): void {
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

  /** Append a record after the events before it (and even when those cannot be written). */
  #append(record: LogRecord): void {
    try {
      this.#appendJournal();
    } finally {
      this.log.append(record);
    }
  }

  #appendJournal(): void {
    const journal = this.#journal;
    if (journal === undefined) return;
    // Taken first: entries that cannot be serialised fail once, not every later flush with them.
    this.#journal = undefined;
    let line: string;
    try {
      line = journalLine(journal, this.#ids);
    } catch (error) {
      // An event that cannot be serialised must not take the others of its line with it.
      const writable = journal.events.flatMap((event, i) => (serialisable(event) ? [i] : []));
      if (writable.length > 0) this.log.appendLine(journalLine(columnsAt(journal, writable), this.#ids));
      throw error;
    }
    this.log.appendLine(line);
  }

  /** Record the machine snapshot; new messages go first as their own records. */
  snapshot(persisted: unknown, messages: readonly Message[]): void {
    const known = this.#persistedMessages;
    const rewritten = known > 0 && (messages.length < known || (this.#lastMessage !== undefined && messages[known - 1] !== this.#lastMessage));
    const from = rewritten ? 0 : known;
    if (from < messages.length) {
      this.#append({ v: LOG_VERSION, kind: 'messages', from, messages: this.redact(messages.slice(from)) });
    }
    this.#persistedMessages = messages.length;
    this.#lastMessage = messages[messages.length - 1];
    const packed = packSnapshot(persisted);
    const context = isObject(packed.context) ? packed.context : undefined;
    const delta = context === undefined || this.#lastContext === undefined ? undefined : contextDelta(this.#lastContext, context);
    this.#lastContext = context;
    const messageCount = messages.length;
    if (delta === undefined) {
      this.#append({ v: LOG_VERSION, kind: 'snapshot', messageCount, snapshot: this.redact(packed) });
    } else {
      // Only what changed is redacted and written: the rest already was, in an earlier record.
      this.#append({ v: LOG_VERSION, kind: 'snapshot', messageCount, delta: true, snapshot: this.redact({ ...packed, context: delta }) });
    }
  }

  toolStarted(key: string, tool: string): void {
    this.#append({ v: LOG_VERSION, kind: 'tool_started', key, tool });
  }

  toolResult(key: string, outcome: ToolOutcome): void {
    this.#append({ v: LOG_VERSION, kind: 'tool_result', key, outcome: this.redact(outcome) });
  }

  /** Append everything recorded so far. Never throws: a failure is the promise's rejection. */
  flush(): Promise<void> {
    return this.#journalFailed() ?? this.log.flush();
  }

  /**
   * `flush`, in the background (see `RunLogWriter.flushBehind`). The journal's entries become a
   * line only when the write starts: one `journal` line per write, not one per call.
   */
  flushBehind(): Promise<void> {
    return this.log.flushBehind(this.#collectJournal);
  }

  readonly #collectJournal = (): void => this.#appendJournal();

  /** Hand the pending journal entries to the log; a rejection if they cannot be serialised. */
  #journalFailed(): Promise<never> | undefined {
    try {
      this.#appendJournal();
      return undefined;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Write the run's status to meta.json, now (a small atomic write). */
  setStatus(status: RunStatus, reason?: TerminationReason): void {
    this.meta = { ...this.meta, status, updatedAt: Date.now(), ...(reason === undefined ? {} : { reason }) };
    this.metaDoc.data = this.meta;
    this.metaDoc.write();
    this.#hasMetaFile = true;
  }

  /**
   * Append the run's `end` record and flush it with everything still buffered: the log's last
   * line says how the run ended. A run with a meta.json (it waited for a human) updates it too.
   */
  end(reason: TerminationReason): void {
    const status = finalStatusOf(reason);
    this.#append({ v: LOG_VERSION, kind: 'end', status, reason, at: Date.now(), runId: this.meta.runId });
    // A journal-only log may have a background write in flight: `close` writes the end after it.
    if (!this.journalOnly) this.log.flushSync();
    if (this.#hasMetaFile) this.setStatus(status, reason);
  }

  /** Flush, then release the run. */
  async close(): Promise<void> {
    try {
      this.#appendJournal();
      await this.log.close();
    } finally {
      this.lock.release();
    }
  }
}
