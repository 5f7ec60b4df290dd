/**
 * A segment's mtime is the lease of every run in it. A resume takes the run's lock, then copies what a
 * resume reads of the run to `runs/<runId>.jsonl` (placed whole), which readers prefer to the segment
 * from then on; the journal before its last checkpoint is read from the segment.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DocumentFile } from './documentFile.ts';
import { corrupt } from './runLog.ts';
import { findRunLine, headsAndEnds, readSegment, runIdOf, segmentLines, segmentRunEnds, segmentRunIds, type JournalSegments, type LineSpan, type RunEnds } from './journalSegment.ts';
import { createdRunHeldHere, currentOwner, holdCreatedRun, liveLockHolder, ownerIsLive, ownerProcessLive, type BaseClaim, type RunLock } from './lock.ts';
import { isFinalStatus, LOG_VERSION, RUN_ID_PATTERN, type IndexedRun, type LogRecord, type RunHeaderRecord, type RunInput, type RunMeta } from './records.ts';
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
  const claim = holdCreatedRun(log.file, { lockFile: paths.lock, leaseMs: store.leaseMs, movedTo: paths.log, newId: true, onLost: (reason) => writer?.markLost(reason) });
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

/** `read`: the run's header and end, already read. */
export function readSegmentMeta(store: SegmentStore, paths: RunPaths, runId: string, read?: RunEnds): RunMeta | null {
  let meta = readStoredMeta(store.metaFile(paths));
  const { header, end } = read ?? (existsSync(paths.log) ? segmentRunEnds(paths.log, runId) : {});
  if (meta === undefined) {
    if (header === undefined) return null;
    meta = metaFromHeader(header);
  }
  if (isFinalStatus(meta.status)) return meta;
  return end === undefined ? meta : endedMeta(meta, end);
}

function headerAndEnd(records: readonly LogRecord[]): RunEnds {
  const header = records.find((record) => record.kind === 'run');
  const end = records.findLast((record) => record.kind === 'end');
  return { ...(header === undefined ? {} : { header }), ...(end === undefined ? {} : { end }) };
}

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
        const meta = readSegmentMeta(store, paths, runId, headerAndEnd(own));
        if (meta !== null) metas.push(meta);
      } catch (error) {
        metas.push(corruptRun(runId, paths.meta, error));
      }
    }
  }
  return metas;
}

export function segmentRunState(file: string, runId: string, bytes?: () => Buffer): { header: RunHeaderRecord | undefined; ended: boolean } {
  const { header, end } = statSync(file).size === 0 ? {} : segmentRunEnds(file, runId, bytes);
  return { header, ended: end !== undefined };
}

/** Nobody owns it once the segment holds an end record for the run. */
export const segmentClaim = (file: string, runId: string, lockFile: string, bytes?: () => Buffer) => (): BaseClaim | undefined => {
  const { header, ended } = segmentRunState(file, runId, bytes);
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
  if (header === undefined || ended) return false;
  if (header.journalOnly === true) return !ownerProcessLive(header.owner);
  if (liveLockHolder(paths.lock, leaseMs) !== undefined) return false;
  if (isThisProcess(header.owner)) return !createdRunHeldHere(paths.lock);
  return !ownerIsLive(header.owner, statSync(paths.log).mtimeMs, paths.log, leaseMs);
}

/**
 * A run with checkpoints takes its header, its last checkpoint with the bases it builds on, and what
 * followed: what a resume reads, so a move costs the same at iteration 5 and 500. The journal before
 * the checkpoint stays in the segment, where `readJournal` finds it. A run without one is copied
 * whole. Lines are copied as written. A log already there (a resume that got this far before) is kept.
 */
export function moveOutOfSegment(segment: string, runId: string, flatLog: string, bytes: () => Buffer = () => readFileSync(segment)): void {
  if (existsSync(flatLog)) return;
  const buffer = bytes();
  const last = findRunLine(buffer, 'checkpoint', runId, { last: true });
  const lines = last === undefined ? segmentLines(segment, runId, buffer.toString('utf8')) : fromCheckpoint(segment, runId, buffer, last);
  const aside = `${flatLog}.${randomUUID()}.tmp`;
  writeFileSync(aside, `${lines.join('\n')}\n`, { flag: 'wx' });
  try {
    linkSync(aside, flatLog);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(aside);
  }
}

/** The tail the writer gives a checkpoint that builds on another: where the base's line is, in bytes. */
const BASE_TAIL = /,"base":\{"at":(\d+),"bytes":(\d+)\}\}$/;

/** From its head, where the writer puts it right after the run's id. */
function checkpointIndex(line: string): number {
  return Number(/^\{"v":\d+,"kind":"checkpoint","runId":"[^"]*","index":(\d+),/.exec(line)?.[1] ?? Number.NaN);
}

function fromCheckpoint(segment: string, runId: string, buffer: Buffer, last: LineSpan): string[] {
  const lineAt = ({ start, end }: LineSpan): string => buffer.toString('utf8', start, end);
  const header = findRunLine(buffer, 'run', runId);
  if (header === undefined) throw corrupt(segment, `run ${runId} has a checkpoint but no header line`, undefined);
  const start = findRunLine(buffer, 'start', runId, { from: header.end });
  // Base first. Where a checkpoint says its base is cannot be trusted in a segment: its length was counted
  // before the run was named in it, and another run's line may have been written ahead of it. Its base is
  // the run's last checkpoint before it with the index it builds on.
  const chain = [lineAt(last)];
  for (let span = last; BASE_TAIL.test(chain[0] as string); ) {
    const index = checkpointIndex(chain[0] as string);
    const wanted = index & (index - 1);
    let found = findRunLine(buffer, 'checkpoint', runId, { last: true, before: span.start });
    while (found !== undefined && checkpointIndex(lineAt(found)) !== wanted) found = findRunLine(buffer, 'checkpoint', runId, { last: true, before: found.start });
    if (found === undefined) throw corrupt(segment, `run ${runId}: checkpoint ${index} builds on checkpoint ${wanted}, and none is before it`, undefined);
    span = found;
    chain.unshift(lineAt(found));
  }
  const lines = [lineAt(header), ...(start === undefined ? [] : [lineAt(start)])];
  // The copies name their bases where they are now.
  let at = lines.reduce((bytes, line) => bytes + Buffer.byteLength(line) + 1, 0);
  let previous: { at: number; bytes: number } | undefined;
  for (const line of chain) {
    const copy = previous === undefined ? line : line.replace(BASE_TAIL, `,"base":{"at":${previous.at},"bytes":${previous.bytes}}}`);
    lines.push(copy);
    previous = { at, bytes: Buffer.byteLength(copy) + 1 };
    at += previous.bytes;
  }
  return [...lines, ...segmentLines(segment, runId, buffer.toString('utf8', last.end + 1))];
}
