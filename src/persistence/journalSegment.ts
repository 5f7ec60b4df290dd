/**
 * Segments: where a store puts the runs whose ids it picks. Every such run of one store, in one
 * process, appends to the same file, `<dir>/journal/<segmentId>.jsonl`, each record carrying its
 * run id, instead of creating a file of its own: creating, filling and closing a file per run
 * cost a short run far more than appending its lines to an open one, most of it in the kernel (a
 * new inode, its own pages, its own writeback; bench/RESULTS.md has the figures).
 *
 * A run id names its segment (`run_<segmentId>_<n>`), so reading one run opens one file. A
 * segment is written by one process only: its name is new and random. It is closed, and the
 * next run starts a new one, when it is full or has been idle a while (see {@link SegmentLimits});
 * a write that fails retires it too. A journal-only store's segment is written in the background;
 * a resumable store's synchronously, where its runs flush (see fileStore.ts for how a resume
 * moves a run out of its segment).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { sep } from 'node:path';
import type { LogRecord } from './records.ts';
import { readRunLog, RunLogWriter, type RunLog } from './runLog.ts';

export interface SegmentLimits {
  /** A segment takes no new runs once it holds this many characters (reading one run reads its segment). Default 8 MiB. */
  readonly maxChars: number;
  /** An open segment with no run in flight for this long is closed. Default 2 s. */
  readonly idleMs: number;
}

const DEFAULT_LIMITS: SegmentLimits = { maxChars: 8 * 1024 * 1024, idleMs: 2000 };

/** `run_<segmentId>_<n>`: the id of a run written to a segment, and where to find it. */
const SEGMENT_RUN_ID = /^run_(seg-[0-9a-z]{1,11}-[0-9a-f]{16})_(0|[1-9][0-9]{0,15})$/;

/** The segment a run id names, or undefined for any other id. */
export function segmentIdOf(runId: string): string | undefined {
  return SEGMENT_RUN_ID.exec(runId)?.[1];
}

/** The file of a segment in `folder`. */
export const segmentFile = (folder: string, segmentId: string): string => `${folder}${sep}${segmentId}.jsonl`;

/** A new segment id: the time, then 64 random bits (nobody else creates a file by this name). */
const newSegmentId = (): string => `seg-${Date.now().toString(36)}-${randomBytes(8).toString('hex')}`;

class Segment {
  readonly id = newSegmentId();
  readonly file: string;
  readonly writer: RunLogWriter;
  #next = 0;
  /** Runs writing to this segment now. */
  #active = 0;
  /** Takes no new runs: closed as soon as its last run is. */
  #retired = false;
  #idleSince = 0;
  #idleTimer: NodeJS.Timeout | undefined;

  constructor(
    folder: string,
    private readonly limits: SegmentLimits,
    private readonly onClosed: (segment: Segment) => void,
  ) {
    this.file = segmentFile(folder, this.id);
    this.writer = new RunLogWriter(this.file, { create: 'background', fresh: true });
  }

  get open(): boolean {
    return !this.#retired && this.writer.written < this.limits.maxChars;
  }

  takeRun(): string {
    this.#active++;
    return `run_${this.id}_${this.#next++}`;
  }

  /** A run of this segment has closed (`failed`: its last write did not land). */
  release(failed: boolean): void {
    this.#active--;
    if (failed) this.#retired = true;
    if (this.#active > 0) return;
    if (!this.open) {
      this.#close();
      return;
    }
    this.#idleSince = Date.now();
    this.#idleTimer ??= this.#armIdleTimer(this.limits.idleMs);
  }

  /** One timer per idle spell, not one per run: it checks when it fires and re-arms if a run came and went. */
  #armIdleTimer(ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.#idleTimer = undefined;
      if (this.#active > 0) return;
      const idle = Date.now() - this.#idleSince;
      if (idle >= this.limits.idleMs) this.#close();
      else this.#idleTimer = this.#armIdleTimer(this.limits.idleMs - idle);
    }, ms);
    timer.unref();
    return timer;
  }

  #close(): void {
    this.#retired = true;
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    this.onClosed(this);
    // Every run's lines were written when it closed: nothing is left but the descriptor.
    this.writer.close().catch(() => undefined);
  }
}

/** The segments of one store: the one new runs go to, made when a run needs it. */
export class JournalSegments {
  #current: Segment | undefined;
  readonly #limits: SegmentLimits;

  constructor(
    readonly folder: string,
    limits: Partial<SegmentLimits> = {},
  ) {
    this.#limits = { ...DEFAULT_LIMITS, ...limits };
  }

  /** The segment new runs go to, if one is open (its file exists once a run has closed in it). */
  get currentFile(): string | undefined {
    return this.#current?.file;
  }

  /** Start a run in the current segment: its id, and the log it appends to. */
  openRun(): { runId: string; log: SegmentRunLog } {
    let segment = this.#current;
    if (segment === undefined || !segment.open) {
      // Once per segment, not per run; made again if it was removed under a failed segment.
      mkdirSync(this.folder, { recursive: true });
      segment = new Segment(this.folder, this.#limits, (closed) => {
        if (this.#current === closed) this.#current = undefined;
      });
      this.#current = segment;
    }
    const runId = segment.takeRun();
    return { runId, log: new SegmentRunLog(segment, runId) };
  }
}

/** The start of a line whose record does not name its run (a checkpoint, serialised by hand): `{"v":…,"kind":"…",`. */
const UNNAMED_LINE = /^\{"v":\d+,"kind":"[a-z.]+",/;

/**
 * One run's view of its segment: its lines go to the shared writer, each naming the run (a
 * record that does not carry its run id gets one); `close` waits for them to land.
 */
export class SegmentRunLog implements RunLog {
  #closed = false;
  #collect: (() => void) | undefined;
  readonly #runIdJson: string;

  constructor(
    private readonly segment: Segment,
    readonly runId: string,
  ) {
    this.#runIdJson = JSON.stringify(runId);
  }

  get file(): string {
    return this.segment.file;
  }

  /** Where the next line appended will start in the segment (its other runs append in between, and are counted). */
  get end(): number {
    return this.segment.writer.end;
  }

  append(record: LogRecord): void {
    if (this.#closed) return;
    this.segment.writer.append(record.kind === 'event' || record.runId !== undefined ? record : { ...record, runId: this.runId });
  }

  appendLine(json: string): void {
    if (this.#closed) return;
    if (json.includes('"runId":')) {
      this.segment.writer.appendLine(json);
      return;
    }
    const head = UNNAMED_LINE.exec(json)?.[0];
    this.segment.writer.appendLine(head === undefined ? json : `${head}"runId":${this.#runIdJson},${json.slice(head.length)}`);
  }

  flush(): Promise<void> {
    return this.#closed ? Promise.resolve() : this.segment.writer.flush();
  }

  flushSync(head?: string): void {
    if (!this.#closed) this.segment.writer.flushSync(head);
  }

  flushBehind(collect?: () => void): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (collect !== undefined) this.#collect = collect;
    return this.segment.writer.flushBehind(collect);
  }

  /** Segments are never taken over; a run abandoning one still lands what it wrote. */
  abandon(): void {
    this.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#collect !== undefined) this.segment.writer.forget(this.#collect);
    let failed = true;
    try {
      await this.segment.writer.settle();
      failed = false;
    } finally {
      this.segment.release(failed);
    }
  }
}

// ---- reading segments ---------------------------------------------------------------------

/** The run a record belongs to (every record a segment holds names it). */
export function runIdOf(record: LogRecord): string | undefined {
  if (record.kind === 'event') return record.entry.runId;
  return 'runId' in record ? record.runId : undefined;
}

/** Lines of a segment that may hold a record of `runId`: every record of a run holds its id as written. */
export const mentions = (runId: string) => {
  const needle = `"runId":${JSON.stringify(runId)}`;
  return (line: string): boolean => line.includes(needle);
};

/** The records of one run in a segment (a lookup by its id, only lines that mention it parsed). */
export function segmentRecords(file: string, runId: string): { records: LogRecord[]; warnings: string[] } {
  const { records, warnings } = readSegment(file, mentions(runId));
  return { records: records.filter((record) => runIdOf(record) === runId), warnings };
}

/** A segment's lines that `select` accepts. A segment is empty from its creation to its first write. */
export function readSegment(file: string, select: (line: string) => boolean): { records: LogRecord[]; warnings: string[] } {
  return statSync(file).size === 0 ? { records: [], warnings: [] } : readRunLog(file, select);
}

/** Lines of a segment that are runs' headers and ends: what an index needs. */
export const headsAndEnds = (line: string): boolean => /^\{"v":\d+,"kind":"(?:run|end)"/.test(line);

/** The ids of the runs whose headers a segment holds, from lines that need not parse. */
export function segmentRunIds(file: string): string[] {
  const ids = new Set<string>();
  for (const match of readFileSync(file, 'utf8').matchAll(/"kind":"run","runId":"([A-Za-z0-9_-]{1,128})"/g)) ids.add(match[1] as string);
  return [...ids];
}

