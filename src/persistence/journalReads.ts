/**
 * A run's journal read again and again (a page following it polls) costs what was appended since
 * the last read, not the whole log or segment: lines are append-only, so where a read ended and the
 * highest sequence before it say which later reads may start there.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { JournalEntry } from '../core/loopEvent.ts';
import { StoreError } from './errors.ts';
import { mentions, runIdOf } from './journalSegment.ts';
import type { LogRecord } from './records.ts';
import { corrupt, parseRunLog } from './runLog.ts';
import { journalEntries } from './runWriter.ts';

export interface JournalRead {
  readonly entries: JournalEntry[];
  readonly warnings: string[];
  /** What this read took from the file: the bytes from where it started, and the records it parsed. */
  readonly read: { readonly bytes: number; readonly records: number };
}

interface Cursor {
  readonly file: string;
  readonly ino: number;
  /** Where the last read's last whole line ended. */
  readonly bytes: number;
  /** The highest sequence of the run's entries before `bytes` (-1 for none). */
  readonly last: number;
}

/** A cursor is a few numbers; this many are kept, the least recently read dropped first. */
const MAX_CURSORS = 1024;

export class JournalReads {
  readonly #cursors = new Map<string, Cursor>();

  /** `segment`: the file holds other runs' records too. Entries are those with a sequence above `after`, if given. */
  read(runId: string, file: string, segment: boolean, after?: number): JournalRead {
    const fd = openSync(file, 'r');
    let buffer: Buffer;
    let start = 0;
    let ino: number;
    try {
      const stat = fstatSync(fd);
      ino = stat.ino;
      const cursor = this.#cursors.get(runId);
      // Every entry before the cursor has a sequence at most `after`: a whole read would leave them out too.
      if (after !== undefined && cursor !== undefined && cursor.file === file && cursor.ino === ino && cursor.bytes <= stat.size && after >= cursor.last) start = cursor.bytes;
      buffer = Buffer.alloc(stat.size - start);
      let got = 0;
      while (got < buffer.length) {
        const n = readSync(fd, buffer, got, buffer.length - got, start + got);
        if (n === 0) break;
        got += n;
      }
      buffer = buffer.subarray(0, got);
    } finally {
      closeSync(fd);
    }
    const cursor = start === 0 ? undefined : this.#cursors.get(runId);
    if (start === 0 && buffer.length === 0 && !segment) throw corrupt(file, 'the file is empty', undefined);
    const log = buffer.length === 0 ? { records: [] as LogRecord[], warnings: [] as string[], validBytes: start } : parseRunLog(file, buffer, start, segment ? mentions(runId) : undefined);
    const own = segment ? log.records.filter((record) => runIdOf(record) === runId) : log.records;
    // A segment holds a run once its header is in it; a cursor exists only for a run found so.
    if (segment && start === 0 && !own.some((record) => record.kind === 'run')) throw new StoreError('run_not_found', `No run ${runId} in ${file}.`, { file, runId });
    const entries = journalEntries(own);
    let last = cursor?.last ?? -1;
    for (const entry of entries) if (entry.sequence > last) last = entry.sequence;
    this.#cursors.delete(runId);
    this.#cursors.set(runId, { file, ino, bytes: log.validBytes, last });
    if (this.#cursors.size > MAX_CURSORS) this.#cursors.delete(this.#cursors.keys().next().value as string);
    return {
      entries: after === undefined ? entries : entries.filter((entry) => entry.sequence > after),
      warnings: log.warnings,
      read: { bytes: buffer.length, records: log.records.length },
    };
  }
}
