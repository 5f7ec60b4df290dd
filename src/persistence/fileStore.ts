/**
 * Under `dir/runs/`: `<runId>.jsonl` (the run log), `<runId>.meta.json` (status, once the run first
 * waits for a human), `<runId>.lock` (taken by a resume). Runs whose id the store picks share a
 * segment in `journal/` instead of a log of their own: creating files is what a short run costs most.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigurationError } from '../core/errors.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
import { DEFAULTS } from '../core/defaults.ts';
import { DocumentFile } from './documentFile.ts';
import { CorruptFileError, StoreError } from './errors.ts';
import { acquireRunLock, heldInThisProcess, holdCreatedRun, liveLockHolder, ownerIsLive, ownerProcessLive } from './lock.ts';
import {
  isFinalStatus,
  LOG_VERSION,
  META_VERSION,
  RUN_ID_PATTERN,
  RunMeta,
  type FinalStatus,
  type IndexedRun,
  type RunHeaderRecord,
  type RunInput,
  type RunOwner,
} from './records.ts';
import { JournalSegments, segmentBytes, segmentFile, segmentIdOf, segmentRecords, segmentRunEnds, type SegmentLimits } from './journalSegment.ts';
import { JournalReads, type JournalRead } from './journalReads.ts';
import { corruptRun, endedMeta, flatPaths, LOG_SUFFIX, META_SUFFIX, metaDoc, metaFromHeader, readStoredMeta, type RunPaths } from './runFiles.ts';
import { createSegmentRun, listSegmentRuns, moveOutOfSegment, readSegmentMeta, runHeader, segmentClaim, segmentOwnerGone, type SegmentStore } from './segmentRuns.ts';
import { recover, type RecoveredRun } from './recover.ts';
import { readRunEnd, readRunHeader, RunLogWriter } from './runLog.ts';
import { checkpointPolicy, readRunLogForResume } from './checkpointLog.ts';
import { journalEntries, RunWriter } from './runWriter.ts';
import { defined } from '../core/defined.ts';

export type { RecoveredRun } from './recover.ts';
export { RunWriter } from './runWriter.ts';

export interface FileStoreOptions {
  /** Default `.actorloop` in the working directory. */
  readonly dir?: string;
  /** `'journal'`: the journal only, appended in the background; such runs cannot be resumed. */
  readonly mode?: 'resumable' | 'journal';
  readonly journalSegments?: Partial<SegmentLimits>;
  readonly leaseMs?: number;
  readonly checkpoints?: { readonly every?: number } | false;
}

export interface ResumeOptions {
  /** Take the run over even if its writer's lease is live; a live writer stops at its next renewal. */
  readonly takeover?: boolean;
}

export interface ResumedRun {
  readonly writer: RunWriter;
  readonly recovered: RecoveredRun;
  readonly tookOver?: RunOwner;
}

export interface RunStore {
  readonly dir: string;
  readonly mode: 'resumable' | 'journal';
  /** Without `runId` the store picks one in its current segment. Values are written as given: redact secrets before. */
  createRun(init: { runId?: string; agentId: string; task: string; input?: RunInput }): RunWriter;
  /** Throws StoreError (`run_finished`) for a run that ended for good, StoreError (`run_not_resumable`) for a journal-only one, StoreError (`run_locked`) while another writer holds it. */
  resumeRun(runId: string, options?: ResumeOptions): ResumedRun;
  /** Runs whose files are corrupt are listed as `corrupt`. */
  listRuns(): Promise<IndexedRun[]>;
  getRun(runId: string): Promise<RunMeta | null>;
  /**
   * `after`: only the entries whose sequence follows it. A reader that polls a run passes the last it has,
   * and the store reads only what was appended since its last read of the run.
   */
  readJournal(runId: string, options?: { readonly after?: number }): { entries: JournalEntry[]; warnings: string[]; read?: JournalRead['read'] };
  /**
   * False while a writer holds the run and once it ended. A journal-only run has no lease: it is gone once the
   * process its header names has exited, which only that process's host can tell (from another, false).
   */
  ownerGone(runId: string): boolean;
}

/**
 * @example
 * createAgent({ model, tools, persistence: { store: createFileStore({ dir: '.actorloop' }) } });
 */
export function createFileStore(options: FileStoreOptions = {}): RunStore {
  const dir = resolve(options.dir ?? '.actorloop');
  const mode = options.mode ?? 'resumable';
  if (mode !== 'resumable' && mode !== 'journal') {
    throw new ConfigurationError(`createFileStore: mode must be 'resumable' or 'journal', not ${JSON.stringify(mode)}.`);
  }
  // A path that names a file would read as an empty store: runs listed as none, new ones failing later.
  if (existsSync(dir) && !statSync(dir).isDirectory()) {
    throw new ConfigurationError(`createFileStore: ${dir} is a file, not a folder: give the folder the store keeps its runs in (it is made when missing).`);
  }
  const journalOnly = mode === 'journal';
  const leaseMs = positive('leaseMs', options.leaseMs) ?? DEFAULTS.persistence.leaseMs;
  const checkpoints = checkpointPolicy(options.checkpoints);
  const runsDir = join(dir, 'runs');
  let runsDirMade = false;
  const checkId = (runId: string): void => {
    if (!RUN_ID_PATTERN.test(runId)) {
      throw new ConfigurationError(`Run id "${runId.slice(0, 64)}" is not usable as a file name: use letters, digits, "_" and "-" (1–128).`);
    }
  };
  const journalDir = join(dir, 'journal');
  const segments = new JournalSegments(journalDir, segmentLimits(options.journalSegments));
  /** A run the store named has its log in a segment and nothing in `runs/` but, once it waits, meta.json. */
  const locate = (runId: string): RunPaths => {
    checkId(runId);
    const paths = flatPaths(runsDir, runId);
    const segmentId = segmentIdOf(runId);
    if (segmentId === undefined || existsSync(paths.log)) return paths;
    return { ...paths, log: segmentFile(journalDir, segmentId), segment: true };
  };
  const metaFile = (paths: RunPaths) => new DocumentFile(paths.meta, RunMeta, META_VERSION);
  const segmentStore: SegmentStore = { runsDir, segments, leaseMs, checkpoints, metaFile };
  const journalReads = new JournalReads();
  /** By moved run, the last journal entry its segment holds. */
  const movedLast = new Map<string, number>();

  const readMeta = (runId: string): RunMeta | null => {
    const paths = locate(runId);
    if (paths.segment === true) return readSegmentMeta(segmentStore, paths, runId);
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

  /** Nobody owns a run whose log ends with an `end` record: its writer let go of it. */
  const headerClaim = (logFile: string, header: RunHeaderRecord | null) => () => {
    if (header === null || readRunEnd(logFile) !== null) return undefined;
    return { owner: header.owner, heartbeatAt: statSync(logFile).mtimeMs, file: logFile };
  };

  return {
    dir,
    mode,
    createRun({ runId: givenId, agentId, task, input }) {
      if (givenId === undefined) return createSegmentRun(segmentStore, { agentId, task, journalOnly, ...defined({ input }) });
      const runId = givenId;
      checkId(runId);
      if (segmentIdOf(runId) !== undefined) {
        throw new ConfigurationError(`Run id "${runId}" has the form of the ids the store picks for runs it keeps in segments (run_seg-…_n); pick another, or let the store pick one.`);
      }
      if (!runsDirMade) {
        mkdirSync(runsDir, { recursive: true });
        runsDirMade = true;
      }
      const paths = flatPaths(runsDir, runId);
      const logFile = paths.log;
      // A journal's file may still be in creation, and its header unwritten.
      if (heldInThisProcess(logFile)) {
        throw new StoreError('run_locked', `Run ${runId} is already being written by process ${process.pid} (this process); pick a new run id.`, { file: logFile, runId });
      }
      // A journal's file is created in the background: an existing run is caught here, one created
      // in the meantime fails the journal's writes.
      if (journalOnly && existsSync(logFile)) throw existingRunError(paths, runId, dir, leaseMs);
      let log: RunLogWriter;
      try {
        log = new RunLogWriter(logFile, { create: journalOnly ? 'background' : true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        throw existingRunError(paths, runId, dir, leaseMs);
      }
      let writer: RunWriter | undefined;
      // A journal-only run is never resumed, so nobody needs its lease.
      const claim = holdCreatedRun(logFile, {
        lockFile: paths.lock,
        leaseMs,
        ...(journalOnly ? { renew: false } : { written: () => log.bytes }),
        onLost: (reason) => writer?.markLost(reason),
      });
      try {
        const header = runHeader(runId, agentId, task, journalOnly);
        log.append(header);
        if (!journalOnly && input !== undefined) log.append({ v: LOG_VERSION, kind: 'start', input });
        // Written at once: from here on other processes see who owns the run, and a resume has its input.
        if (!journalOnly) log.flushSync();
        writer = new RunWriter(log, () => metaDoc(metaFile(paths)), metaFromHeader(header), claim, false, journalOnly, journalOnly ? undefined : checkpoints);
        return writer;
      } catch (error) {
        claim.release();
        throw error;
      }
    },

    resumeRun(runId, { takeover = false } = {}) {
      const located = locate(runId);
      if (!existsSync(located.log)) throw new StoreError('run_not_found', `No run ${runId} in ${dir}.`, { file: located.log, runId });
      const inSegment = located.segment === true;
      // Read once for the three looks below, and again only if it grew meanwhile.
      const bytes = segmentBytes(located.log);
      const ends = inSegment ? segmentRunEnds(located.log, runId, bytes) : undefined;
      const header = ends === undefined ? readRunHeader(located.log) : (ends.header ?? null);
      if (inSegment && header === null) throw new StoreError('run_not_found', `No run ${runId} in ${dir}.`, { file: located.log, runId });
      if (header?.journalOnly === true) throw notResumable(runId, located.log);
      const paths = flatPaths(runsDir, runId);
      const logFile = paths.log;
      // Refused before taking the lock: a run that ended for good needs no writer.
      const doc = metaFile(paths);
      const storedMeta = readStoredMeta(doc);
      const known = ends === undefined ? storedMeta : readSegmentMeta(segmentStore, located, runId, ends);
      if (known != null && isFinalStatus(known.status) && known.resumable !== true) throw finishedError(runId, known.status, storedMeta === undefined ? located.log : doc.file);
      let writer: RunWriter | undefined;
      const base = inSegment ? segmentClaim(located.log, runId, paths.lock, bytes) : headerClaim(logFile, header);
      if (inSegment) mkdirSync(runsDir, { recursive: true });
      const lock = acquireRunLock(paths.lock, runId, { leaseMs, takeover, base, onLost: (reason) => writer?.markLost(reason) });
      try {
        if (inSegment) moveOutOfSegment(located.log, runId, logFile, bytes);
        // A crash during an atomic write can leave lowdb's temp file behind; it never holds acknowledged data.
        rmSync(paths.temp, { force: true });
        const log = readRunLogForResume(logFile);
        const end = log.records.at(-1);
        if (end?.kind === 'end' && end.resumable !== true) throw finishedError(runId, end.status, logFile);
        const meta = storedMeta ?? (header === null ? undefined : metaFromHeader(header));
        if (meta === undefined) {
          throw new StoreError('run_not_found', `Run ${runId} has a log but no meta.json and no header; it never started properly.`, { file: logFile, runId });
        }
        const recovered = { ...recover(log.records, meta, log.warnings, logFile), read: { records: log.recordsRead, bytes: log.bytesRead } };
        writer = new RunWriter(new RunLogWriter(logFile, { truncateTo: log.validBytes }), () => metaDoc(doc), meta, lock, storedMeta !== undefined, false, checkpoints);
        if (log.restored !== undefined) writer.restoredFrom(log.restored);
        // The index must not show a resumed run as failed: meta.json says what its last line does not.
        if (storedMeta !== undefined && storedMeta.status !== 'running') writer.setStatus('running');
        return { writer, recovered, ...(lock.replaced?.live === true ? { tookOver: lock.replaced.owner } : {}) };
      } catch (error) {
        lock.release();
        throw error;
      }
    },

    async listRuns() {
      const metas: IndexedRun[] = [];
      if (!existsSync(runsDir)) return listSegmentRuns(segmentStore, journalDir);
      const listed = new Set<string>();
      for (const name of readdirSync(runsDir)) {
        // Not locks, temp files or metadata, except the meta.json of a segment's run (its header may not be written yet).
        const runId = name.endsWith(LOG_SUFFIX)
          ? name.slice(0, -LOG_SUFFIX.length)
          : name.endsWith(META_SUFFIX) && segmentIdOf(name.slice(0, -META_SUFFIX.length)) !== undefined
            ? name.slice(0, -META_SUFFIX.length)
            : undefined;
        if (runId === undefined || !RUN_ID_PATTERN.test(runId) || listed.has(runId)) continue;
        listed.add(runId);
        try {
          const meta = readMeta(runId);
          if (meta !== null) metas.push(meta);
        } catch (error) {
          metas.push(corruptRun(runId, error instanceof CorruptFileError ? error.file : join(runsDir, name), error));
        }
      }
      for (const meta of listSegmentRuns(segmentStore, journalDir)) if (!listed.has(meta.runId)) metas.push(meta);
      return metas.sort((a, b) => b.createdAt - a.createdAt);
    },

    async getRun(runId) {
      return readMeta(runId);
    },

    readJournal(runId, { after } = {}) {
      const paths = locate(runId);
      const logFile = paths.log;
      if (!existsSync(logFile)) throw new StoreError('run_not_found', `No run ${runId} in ${dir}.`, { file: logFile, runId });
      // A journal-only run's log (it has no meta) is empty from its creation to its first write: nothing to read yet, nothing corrupt.
      if (paths.segment !== true && statSync(logFile).size === 0 && !existsSync(paths.meta)) {
        throw new StoreError('run_not_found', `Run ${runId} has nothing in ${logFile} yet: its first write has not landed. Read it again shortly.`, { file: logFile, runId });
      }
      const read = journalReads.read(runId, logFile, paths.segment === true, after);
      const segmentId = paths.segment === true ? undefined : segmentIdOf(runId);
      if (segmentId === undefined) return read;
      // A run moved out of its segment from a checkpoint left the journal before it there, and writes no more of it there.
      const segmentLast = movedLast.get(runId);
      if (segmentLast !== undefined && after !== undefined && after >= segmentLast) return read;
      const segment = segmentFile(journalDir, segmentId);
      if (!existsSync(segment)) return { ...read, warnings: [...read.warnings, `${logFile}: run ${runId}'s journal before its last checkpoint was in ${segment}, which is gone.`] };
      const earlier = journalEntries(segmentRecords(segment, runId).records);
      movedLast.set(runId, earlier.at(-1)?.sequence ?? -1);
      if (movedLast.size > 1024) movedLast.delete(movedLast.keys().next().value as string);
      // A run copied whole has its earlier entries in its own log too.
      const first = read.entries[0]?.sequence ?? Number.POSITIVE_INFINITY;
      const missing = earlier.filter((entry) => entry.sequence < first && (after === undefined || entry.sequence > after));
      return missing.length === 0 ? read : { ...read, entries: [...missing, ...read.entries] };
    },

    ownerGone(runId) {
      const paths = locate(runId);
      if (!existsSync(paths.log)) return false;
      if (paths.segment === true) return segmentOwnerGone(paths, runId, leaseMs);
      const header = readRunHeader(paths.log);
      if (header === null || readRunEnd(paths.log) !== null) return false;
      if (header.journalOnly === true) return !ownerProcessLive(header.owner);
      return liveWriter(paths, () => header, leaseMs) === undefined;
    },
  };
}

function liveWriter(paths: RunPaths, readHeader: () => RunHeaderRecord | null, leaseMs: number): { owner: RunOwner; file: string } | undefined {
  const holder = liveLockHolder(paths.lock, leaseMs);
  if (holder !== undefined) return { owner: holder, file: paths.lock };
  const header = readHeader();
  if (header !== null && readRunEnd(paths.log) === null && ownerIsLive(header.owner, statSync(paths.log).mtimeMs, paths.log, leaseMs)) return { owner: header.owner, file: paths.log };
  return undefined;
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

function positive(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new ConfigurationError(`createFileStore: ${name} must be a positive number of milliseconds, not ${JSON.stringify(value)}.`);
  }
  return value;
}

function notResumable(runId: string, file: string): StoreError {
  return new StoreError('run_not_resumable',
    `Run ${runId} was written by a journal-only store (mode 'journal'): its log holds the journal but not what a resume rebuilds the run from, so it cannot be resumed. Read it with readJournal('${runId}').`,
    { file, runId },
  );
}

function finishedError(runId: string, status: FinalStatus, file: string): StoreError {
  return new StoreError('run_finished', `Run ${runId} already ended (${status}); start a new run instead.`, { file, runId });
}

function lockedBy(owner: RunOwner, file: string, runId: string): StoreError {
  const { pid } = owner;
  return new StoreError('run_locked',
    `Run ${runId} is already being written by process ${pid}${pid === process.pid ? ' (this process)' : ''}. ` +
      'Wait for it to finish or stop it; two writers would interleave the journal.',
    { file, runId },
  );
}

function existingRunError(paths: RunPaths, runId: string, dir: string, leaseMs: number): Error {
  try {
    const writer = liveWriter(paths, () => (existsSync(paths.log) ? readRunHeader(paths.log) : null), leaseMs);
    if (writer !== undefined) return lockedBy(writer.owner, writer.file, runId);
  } catch (error) {
    // A damaged header still takes the id (reading the run says what is wrong).
    if (!(error instanceof CorruptFileError)) return error as Error;
  }
  return new ConfigurationError(`Run ${runId} already exists in ${dir}; resume it or pick a new run id.`);
}

