/** A resume reads from the log's last checkpoint on (found backwards from the end) and its bases, however long the run. */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { DEFAULTS } from '../core/defaults.ts';
import { ConfigurationError } from '../core/errors.ts';
import type { Message } from '../core/messages.ts';
import { LOG_VERSION, type CheckpointRecord, type LogRecord } from './records.ts';
import { corrupt, parseLine, parseRunLog, readRunLog, type ReadLog } from './runLog.ts';
import type { CheckpointLink, CheckpointPolicy, RestoredCheckpoint } from './runWriter.ts';

export interface ResumeRead extends ReadLog {
  /** Absent when the log has no checkpoint: it was read whole. */
  readonly restored?: RestoredCheckpoint;
  readonly recordsRead: number;
  readonly bytesRead: number;
}

/**
 * JSON.stringify keeps `v` and `kind` first, and a JSON string never holds a raw newline, so nothing
 * else in a log can look like this. A log with only other versions' checkpoints is read whole.
 */
const MARKER = Buffer.from(`\n{"v":${LOG_VERSION},"kind":"checkpoint",`);

const CHUNK_BYTES = 64 * 1024;

/** Validates, drops a torn last line and throws like {@link readRunLog}, for the lines it reads. */
export function readRunLogForResume(file: string): ResumeRead {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    // An empty file is corrupt: the whole read says so.
    if (size === 0) return { ...readRunLog(file), recordsRead: 0, bytesRead: 0 };
    const { read, from, checkpointAt } = findLastCheckpoint(fd, size);
    if (checkpointAt === undefined) {
      const log = parseRunLog(file, read, 0);
      return { ...log, recordsRead: log.records.length, bytesRead: read.length };
    }
    const tail = read.subarray(checkpointAt - from);
    const log = parseRunLog(file, tail, checkpointAt);
    const last = log.records[0];
    if (last?.kind !== 'checkpoint') throw corrupt(file, `the line at byte ${checkpointAt} looks like a checkpoint and is not one`, undefined);
    const chain: CheckpointLink[] = [];
    let bytesRead = read.length;
    const whole = withConversation(last, (record) => {
      if (record.base === undefined) return undefined;
      const base = readCheckpointAt(fd, file, record.base.at, record.base.bytes);
      chain.unshift({ index: base.index, at: record.base.at, bytes: record.base.bytes, messages: base.from + base.messages.length });
      bytesRead += record.base.bytes;
      return base;
    });
    if (typeof whole === 'string') throw corrupt(file, `${whole} (the last checkpoint starts at byte ${checkpointAt})`, undefined);
    chain.push({ index: last.index, at: checkpointAt, bytes: tail.indexOf(0x0a) + 1, messages: whole.messages.length });
    return {
      records: [whole, ...log.records.slice(1)],
      warnings: log.warnings,
      validBytes: log.validBytes,
      restored: { iteration: whole.iteration, conversation: whole.messages, chain },
      recordsRead: log.records.length + chain.length - 1,
      bytesRead,
    };
  } finally {
    closeSync(fd);
  }
}

function findLastCheckpoint(fd: number, size: number): { read: Buffer; from: number; checkpointAt?: number } {
  const chunks: Buffer[] = [];
  let from = size;
  // The newline ending the last complete line: a checkpoint after it is a torn write.
  let lastNewline = -1;
  while (from > 0) {
    const start = Math.max(0, from - CHUNK_BYTES);
    const chunk = Buffer.allocUnsafe(from - start);
    readSync(fd, chunk, 0, chunk.length, start);
    if (lastNewline === -1) {
      const at = chunk.lastIndexOf(0x0a);
      if (at !== -1) lastNewline = start + at;
    }
    // A marker may straddle this chunk and the next one, read before it.
    const next = chunks[0];
    const region = next === undefined ? chunk : Buffer.concat([chunk, next.subarray(0, MARKER.length - 1)]);
    let at = region.lastIndexOf(MARKER);
    while (at !== -1 && start + at >= lastNewline) at = at === 0 ? -1 : region.lastIndexOf(MARKER, at - 1);
    chunks.unshift(chunk);
    from = start;
    if (at !== -1) return { read: Buffer.concat(chunks), from, checkpointAt: start + at + 1 };
  }
  return { read: Buffer.concat(chunks), from };
}

function readCheckpointAt(fd: number, file: string, at: number, bytes: number): CheckpointRecord {
  const buffer = Buffer.allocUnsafe(bytes);
  const got = readSync(fd, buffer, 0, bytes, at);
  const parsed = got === bytes && buffer[bytes - 1] === 0x0a ? parseLine(buffer.toString('utf8', 0, bytes - 1)) : undefined;
  if (parsed?.ok !== true || parsed.value.kind !== 'checkpoint') {
    throw corrupt(file, `a checkpoint names bytes ${at}–${at + bytes} as its base, and they are not a checkpoint`, undefined);
  }
  return parsed.value;
}

/** Or why its bases do not add up. */
export function withConversation(last: CheckpointRecord, baseOf: (record: CheckpointRecord) => CheckpointRecord | undefined): CheckpointRecord | string {
  if (last.from === 0) return last;
  const parts: (readonly Message[])[] = [last.messages];
  let current = last;
  while (current.from > 0) {
    const base = baseOf(current);
    if (base === undefined || base.index !== (current.index & (current.index - 1)) || base.from + base.messages.length !== current.from) {
      return `checkpoint ${current.index} has no base holding its conversation's first ${current.from} messages`;
    }
    parts.unshift(base.messages);
    current = base;
  }
  const { base: _base, ...rest } = last;
  return { ...rest, from: 0, messages: parts.flat() };
}

/** For readers of lines, such as a database's rows. */
export function isCheckpointLine(line: string): boolean {
  return line.startsWith(MARKER.toString('utf8', 1));
}

/** All records when there is no checkpoint or its bases are missing: `recover` then says so. */
export function fromLastCheckpoint(records: readonly LogRecord[]): readonly LogRecord[] {
  const byIndex = new Map<number, CheckpointRecord>();
  let last = -1;
  for (const [i, record] of records.entries()) {
    if (record.kind !== 'checkpoint') continue;
    byIndex.set(record.index, record);
    last = i;
  }
  const checkpoint = records[last];
  if (checkpoint?.kind !== 'checkpoint') return records;
  const whole = withConversation(checkpoint, (record) => byIndex.get(record.index & (record.index - 1)));
  return typeof whole === 'string' ? records : [whole, ...records.slice(last + 1)];
}

export function checkpointPolicy(option: { readonly every?: number } | false | undefined): CheckpointPolicy | undefined {
  if (option === false) return undefined;
  const every: unknown = option?.every ?? DEFAULTS.persistence.checkpointEvery;
  if (typeof every !== 'number' || !Number.isInteger(every) || every < 1) {
    throw new ConfigurationError(`createFileStore: checkpoints.every must be a whole number of iterations ≥ 1, not ${JSON.stringify(every)}.`);
  }
  return { every };
}
