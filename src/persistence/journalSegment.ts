/**
 * Runs whose ids a store picks append to one shared file per process, `journal/<segmentId>.jsonl`,
 * each record naming its run: a file per run costs a short run most of its time. A segment's name
 * is new and random, so one process writes it; it is retired when full, idle, or a write fails.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { sep } from 'node:path';
import { LINE_HEAD, type LogRecord, type RunEndRecord, type RunHeaderRecord } from './records.ts';
import { corrupt, parseLine, parseRunLog, readRunLog, RunLogWriter, type RunLog } from './runLog.ts';

export interface SegmentLimits {
  /** Reading one run reads its whole segment. */
  readonly maxChars: number;
  readonly idleMs: number;
}

const DEFAULT_LIMITS: SegmentLimits = { maxChars: 8 * 1024 * 1024, idleMs: 2000 };

const SEGMENT_RUN_ID = /^run_(seg-[0-9a-z]{1,11}-[0-9a-f]{16})_(0|[1-9][0-9]{0,15})$/;

export function segmentIdOf(runId: string): string | undefined {
  return SEGMENT_RUN_ID.exec(runId)?.[1];
}

export const segmentFile = (folder: string, segmentId: string): string => `${folder}${sep}${segmentId}.jsonl`;

/** Nobody else creates a file by this name. */
const newSegmentId = (): string => `seg-${Date.now().toString(36)}-${randomBytes(8).toString('hex')}`;

class Segment {
  readonly id = newSegmentId();
  readonly file: string;
  readonly writer: RunLogWriter;
  #next = 0;
  #active = 0;
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

  /** `failed`: its last write did not land. */
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

  /** One timer per idle spell, not one per run: it re-arms if a run came and went. */
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

export class JournalSegments {
  #current: Segment | undefined;
  readonly #limits: SegmentLimits;

  constructor(
    readonly folder: string,
    limits: Partial<SegmentLimits> = {},
  ) {
    this.#limits = { ...DEFAULT_LIMITS, ...limits };
  }

  get currentFile(): string | undefined {
    return this.#current?.file;
  }

  openRun(): { runId: string; log: SegmentRunLog } {
    let segment = this.#current;
    if (segment === undefined || !segment.open) {
      // Made again if it was removed under a failed segment.
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

  /** Other runs' lines in between are counted. */
  get end(): number {
    return this.segment.writer.end;
  }

  append(record: LogRecord): void {
    if (this.#closed) return;
    // An event names its run in its entry; any other record right after its head, built there rather than spliced in.
    if (record.kind === 'event') this.segment.writer.append(record);
    else this.segment.writer.appendLine(JSON.stringify(Object.assign({ v: record.v, kind: record.kind, runId: this.runId }, record)));
  }

  appendLine(json: string): void {
    if (this.#closed) return;
    // Not a search of the line: a checkpoint's snapshot names the run too, deep inside.
    const head = LINE_HEAD.exec(json)?.[0];
    const named = head === undefined || json.startsWith('"runId":', head.length);
    this.segment.writer.appendLine(named ? json : `${head}"runId":${this.#runIdJson},${json.slice(head.length)}`);
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

export function runIdOf(record: LogRecord): string | undefined {
  if (record.kind === 'event') return record.entry.runId;
  return 'runId' in record ? record.runId : undefined;
}

/** Every record of a run holds its id as written. */
export const mentions = (runId: string) => {
  const needle = `"runId":${JSON.stringify(runId)}`;
  return (line: string): boolean => line.includes(needle);
};

/**
 * A run's lines as written, in order, without parsing those that name it at their head: what a move
 * copies. Only other lines that mention the run are parsed, to tell its events from other runs' text.
 * A torn last line was never acknowledged and is left out. `from`: a line's first character.
 */
export function segmentLines(file: string, runId: string, text = readFileSync(file, 'utf8'), from = 0): string[] {
  const named = mentions(runId);
  const ownHead = `"runId":${JSON.stringify(runId)}`;
  const lines: string[] = [];
  let offset = from;
  for (let end = text.indexOf('\n', offset); end !== -1; offset = end + 1, end = text.indexOf('\n', offset)) {
    const line = text.slice(offset, end);
    if (!named(line)) continue;
    const head = LINE_HEAD.exec(line)?.[0];
    if (head !== undefined && line.startsWith('"runId":', head.length)) {
      if (line.startsWith(ownHead, head.length)) lines.push(line);
      continue;
    }
    const parsed = parseLine(line);
    if (!parsed.ok) throw corrupt(file, `a line of run ${runId} is not a valid record: ${parsed.reason}`, undefined);
    if (runIdOf(parsed.value) === runId) lines.push(line);
  }
  return lines;
}

/** Where a whole line is in a segment's bytes: `end` is its newline's. */
export interface LineSpan {
  readonly start: number;
  readonly end: number;
}

/**
 * The first (or `last`) whole line of `runId` of this kind, found by its head in the raw bytes without
 * splitting the segment into lines: a JSON string never holds a raw quote or newline, so no record's
 * content can look like a line's head.
 */
export function findRunLine(buffer: Buffer, kind: string, runId: string, options: { last?: boolean; from?: number; before?: number } = {}): LineSpan | undefined {
  const needle = Buffer.from(`,"kind":"${kind}","runId":${JSON.stringify(runId)},`);
  const from = options.from ?? 0;
  // `before`: the last line starting before that byte.
  const before = options.before ?? buffer.length;
  let at = options.last === true ? (before === 0 ? -1 : buffer.lastIndexOf(needle, before - 1)) : buffer.indexOf(needle, from);
  while (at !== -1 && at >= from) {
    const start = buffer.lastIndexOf(0x0a, at) + 1;
    const end = buffer.indexOf(0x0a, at);
    if (end !== -1 && /^\{"v":\d+$/.test(buffer.toString('latin1', start, at))) return { start, end };
    at = options.last === true ? (at === 0 ? -1 : buffer.lastIndexOf(needle, at - 1)) : buffer.indexOf(needle, at + 1);
  }
  return undefined;
}

export interface RunEnds {
  readonly header?: RunHeaderRecord;
  readonly end?: RunEndRecord;
}

/** A segment's bytes, read again only once it grew: it is append-only, so the same size is the same bytes. */
export function segmentBytes(file: string): () => Buffer {
  let kept: { readonly ino: number; readonly buffer: Buffer } | undefined;
  return () => {
    const { size, ino } = statSync(file);
    if (kept !== undefined && kept.ino === ino && kept.buffer.length === size) return kept.buffer;
    kept = { ino, buffer: readFileSync(file) };
    return kept.buffer;
  };
}

/** A run's header and its last end record, parsed; the rest of the segment is searched, not read line by line. */
export function segmentRunEnds(file: string, runId: string, bytes: () => Buffer = () => readFileSync(file)): RunEnds {
  const buffer = bytes();
  const parse = (span: LineSpan | undefined): LogRecord | undefined =>
    span === undefined ? undefined : parseRunLog(file, buffer.subarray(span.start, span.end + 1), span.start).records[0];
  const header = parse(findRunLine(buffer, 'run', runId));
  const end = parse(findRunLine(buffer, 'end', runId, { last: true }));
  return { ...(header?.kind === 'run' ? { header } : {}), ...(end?.kind === 'end' ? { end } : {}) };
}

export function segmentRecords(file: string, runId: string): { records: LogRecord[]; warnings: string[] } {
  const { records, warnings } = readSegment(file, mentions(runId));
  return { records: records.filter((record) => runIdOf(record) === runId), warnings };
}

/** A segment is empty from its creation to its first write. */
export function readSegment(file: string, select: (line: string) => boolean): { records: LogRecord[]; warnings: string[] } {
  return statSync(file).size === 0 ? { records: [], warnings: [] } : readRunLog(file, select);
}

export const headsAndEnds = (line: string): boolean => /^\{"v":\d+,"kind":"(?:run|end)"/.test(line);

/** From lines that need not parse. */
export function segmentRunIds(file: string): string[] {
  const ids = new Set<string>();
  for (const match of readFileSync(file, 'utf8').matchAll(/^\{"v":\d+,"kind":"run","runId":"([A-Za-z0-9_-]{1,128})"/gm)) ids.add(match[1] as string);
  return [...ids];
}

