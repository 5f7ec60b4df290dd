/**
 * A segment's mtime is the lease of every run in it. A resume takes the run's lock, then copies its
 * records to `runs/<runId>.jsonl` (placed whole), which readers prefer to the segment from then on.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DocumentFile } from './documentFile.ts';
import { withConversation } from './checkpointLog.ts';
import { corrupt, parseLine } from './runLog.ts';
import { headsAndEnds, mentions, readSegment, runIdOf, segmentLines, segmentRunIds, type JournalSegments } from './journalSegment.ts';
import { createdRunHeldHere, currentOwner, holdCreatedRun, liveLockHolder, ownerIsLive, type BaseClaim, type RunLock } from './lock.ts';
import { isFinalStatus, lineKind, LOG_VERSION, RUN_ID_PATTERN, type CheckpointRecord, type IndexedRun, type LogRecord, type RunHeaderRecord, type RunInput, type RunMeta } from './records.ts';
import { corruptRun, endedMeta, flatPaths, LOG_SUFFIX, metaDoc, metaFromHeader, readStoredMeta, type RunPaths } from './runFiles.ts';
import { RunWriter, type CheckpointPolicy } from './runWriter.ts';

export interface SegmentStore {
  readonly runsDir: string;
  readonly segments: JournalSegments;
  readonly leaseMs: number;
  readonly checkpoints: CheckpointPolicy | undefined;
  readonly metaFile: (paths: RunPaths) => DocumentFile<RunMeta>;
}

export function runHeader(runId: string, agentId: string, task: string, journalOnly: boolean): RunHeaderRecord {
  return {
    v: LOG_VERSION,
    kind: 'run',
    runId,
    agentId,
    task: task.slice(0, 1000),
    createdAt: Date.now(),
    owner: currentOwner(),
    ...(journalOnly ? { journalOnly: true as const } : {}),
  };
}

/** A journal-only segment run needs no lock: its id is new, nobody else writes its segment, nobody resumes it. */
const NO_LOCK: RunLock = { file: '', gen: 0, release: () => undefined };

/** A resumable run's header and input are written at once: from then on a resume finds it. */
export function createSegmentRun(store: SegmentStore, init: { agentId: string; task: string; input?: RunInput; journalOnly: boolean }): RunWriter {
  const { runId, log } = store.segments.openRun();
  const header = runHeader(runId, init.agentId, init.task, init.journalOnly);
  const paths = flatPaths(store.runsDir, runId);
  const openMetaDoc = () => {
    // Only a run that waits for a human has one; `runs/` may not exist yet.
    mkdirSync(store.runsDir, { recursive: true });
    return metaDoc(store.metaFile(paths));
  };
  log.append(header);
  if (init.journalOnly) return new RunWriter(log, openMetaDoc, metaFromHeader(header), NO_LOCK, false, true);
  let writer: RunWriter | undefined;
  const claim = holdCreatedRun(log.file, { lockFile: paths.lock, leaseMs: store.leaseMs, movedTo: paths.log, onLost: (reason) => writer?.markLost(reason) });
  try {
    if (init.input !== undefined) log.append({ v: LOG_VERSION, kind: 'start', input: init.input });
    log.flushSync();
    writer = new RunWriter(log, openMetaDoc, metaFromHeader(header), claim, false, false, store.checkpoints);
    return writer;
  } catch (error) {
    claim.release();
    void log.close().catch(() => undefined);
    throw error;
  }
}

export function readSegmentMeta(store: SegmentStore, paths: RunPaths, runId: string, records?: readonly LogRecord[]): RunMeta | null {
  let meta = readStoredMeta(store.metaFile(paths));
  const own = records ?? (existsSync(paths.log) ? readSegment(paths.log, headOrEndOf(runId)).records.filter((record) => runIdOf(record) === runId) : []);
  const header = own.find((record) => record.kind === 'run');
  if (meta === undefined) {
    if (header === undefined) return null;
    meta = metaFromHeader(header);
  }
  if (isFinalStatus(meta.status)) return meta;
  const end = own.findLast((record) => record.kind === 'end');
  return end === undefined ? meta : endedMeta(meta, end);
}

const headOrEndOf = (runId: string) => {
  const named = mentions(runId);
  return (line: string): boolean => headsAndEnds(line) && named(line);
};

export function listSegmentRuns(store: SegmentStore, journalDir: string): IndexedRun[] {
  if (!existsSync(journalDir)) return [];
  const metas: IndexedRun[] = [];
  for (const name of readdirSync(journalDir)) {
    if (!name.endsWith(LOG_SUFFIX)) continue;
    const file = join(journalDir, name);
    let records: LogRecord[];
    try {
      records = readSegment(file, headsAndEnds).records;
    } catch (error) {
      // Its runs cannot be told apart from the bad line: each is listed as corrupt.
      for (const runId of segmentRunIds(file)) metas.push(corruptRun(runId, file, error));
      continue;
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
      const paths: RunPaths = { ...flatPaths(store.runsDir, runId), log: file, segment: true };
      try {
        const meta = readSegmentMeta(store, paths, runId, own);
        if (meta !== null) metas.push(meta);
      } catch (error) {
        metas.push(corruptRun(runId, paths.meta, error));
      }
    }
  }
  return metas;
}

export function segmentRunState(file: string, runId: string): { header: RunHeaderRecord | undefined; ended: boolean } {
  const own = readSegment(file, headOrEndOf(runId)).records.filter((record) => runIdOf(record) === runId);
  const header = own.find((record) => record.kind === 'run');
  return { header, ended: own.some((record) => record.kind === 'end') };
}

/** Nobody owns it once the segment holds an end record for the run. */
export const segmentClaim = (file: string, runId: string, lockFile: string) => (): BaseClaim | undefined => {
  const { header, ended } = segmentRunState(file, runId);
  if (header === undefined || ended) return undefined;
  // In this process, the run itself must be held: the segment is, by its other runs too.
  return { owner: header.owner, heartbeatAt: statSync(file).mtimeMs, file: isThisProcess(header.owner) ? lockFile : file };
};

function isThisProcess(owner: RunHeaderRecord['owner']): boolean {
  const me = currentOwner();
  return owner.pid === me.pid && (owner.host === undefined || owner.host === me.host) && (owner.startedAt === undefined || owner.startedAt === me.startedAt);
}

export function segmentOwnerGone(paths: RunPaths, runId: string, leaseMs: number): boolean {
  const { header, ended } = segmentRunState(paths.log, runId);
  if (header === undefined || header.journalOnly === true || ended) return false;
  if (liveLockHolder(paths.lock, leaseMs) !== undefined) return false;
  if (isThisProcess(header.owner)) return !createdRunHeldHere(paths.lock);
  return !ownerIsLive(header.owner, statSync(paths.log).mtimeMs, paths.log, leaseMs);
}

/**
 * Of its checkpoints only the last is copied, made whole: the others name their bases by where they
 * are in the segment. The other lines are copied as written, unparsed, so a move costs what copying
 * the run's bytes does. A log already there (a resume that got this far before) is kept.
 */
export function moveOutOfSegment(segment: string, runId: string, flatLog: string): void {
  if (existsSync(flatLog)) return;
  const lines = segmentLines(segment, runId);
  const indexOf = new Map<number, number>();
  let last = -1;
  lines.forEach((line, at) => {
    if (lineKind(line) !== 'checkpoint') return;
    indexOf.set(checkpointIndex(segment, runId, line), at);
    last = at;
  });
  if (last !== -1) {
    const checkpointAt = (at: number): CheckpointRecord => {
      const record = parseLine(lines[at] as string);
      if (!record.ok || record.value.kind !== 'checkpoint') throw corrupt(segment, `run ${runId}: a checkpoint is not a valid record`, undefined);
      return record.value;
    };
    const baseOf = (record: CheckpointRecord): CheckpointRecord | undefined => {
      const at = indexOf.get(record.index & (record.index - 1));
      return at === undefined ? undefined : checkpointAt(at);
    };
    const whole = withConversation(checkpointAt(last), baseOf);
    if (typeof whole === 'string') throw corrupt(segment, `run ${runId}: ${whole}`, undefined);
    lines[last] = JSON.stringify(whole);
  }
  const kept = lines.filter((line, at) => at === last || lineKind(line) !== 'checkpoint');
  const aside = `${flatLog}.${randomUUID()}.tmp`;
  writeFileSync(aside, `${kept.join('\n')}\n`, { flag: 'wx' });
  try {
    linkSync(aside, flatLog);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(aside);
  }
}

/** Read from the head the writer gives a checkpoint; a line laid out otherwise is parsed. */
function checkpointIndex(segment: string, runId: string, line: string): number {
  const index = /^\{"v":\d+,"kind":"checkpoint","runId":"[^"\\]*","index":(\d+),/.exec(line)?.[1];
  if (index !== undefined) return Number(index);
  const record = parseLine(line);
  if (!record.ok || record.value.kind !== 'checkpoint') throw corrupt(segment, `run ${runId}: a checkpoint is not a valid record`, undefined);
  return record.value.index;
}
