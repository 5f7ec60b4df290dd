/**
 * A run's append-only JSONL log. Writes are batched in memory and appended at phase boundaries
 * (`flush`), so the cost per event is a string push and the cost per flush is one append of what
 * is new — never a rewrite of history. A crash can tear only the last line, which the reader
 * drops with a warning; anything else that does not parse is corruption and a typed error.
 */
import { closeSync, constants, copyFileSync, fstatSync, ftruncateSync, open, openSync, readFileSync, readSync, write, writeSync } from 'node:fs';
import { CorruptFileError, StoreError } from './errors.ts';
import { LOG_VERSION, LogRecord, type RunEndRecord, type RunHeaderRecord } from './records.ts';
import { safeJsonParse } from './safeJson.ts';

export interface ReadLog {
  readonly records: LogRecord[];
  readonly warnings: string[];
  /** Byte length of the valid prefix (a torn tail starts here). */
  readonly validBytes: number;
}

/**
 * Read and validate a log. Throws CorruptFileError (after copying the file aside to
 * `<file>.corrupt`) or StoreError (unsupported_version); drops a torn last line with a warning. With
 * `select`, only the complete lines it accepts are parsed and returned (a journal segment's
 * lines of one run, say); the others are skipped unread.
 */
export function readRunLog(file: string, select?: (line: string) => boolean): ReadLog {
  const buffer = readFileSync(file);
  if (buffer.length === 0) throw corrupt(file, 'the file is empty', undefined);
  return parseRunLog(file, buffer, 0, select);
}

/**
 * Parse `buffer`, the bytes of a log from byte `start` (where a line begins) to its end, as
 * {@link readRunLog} parses a whole log; `validBytes` counts from the file's beginning.
 */
export function parseRunLog(file: string, buffer: Buffer, start: number, select?: (line: string) => boolean): ReadLog {
  const text = buffer.toString('utf8');
  const records: LogRecord[] = [];
  const warnings: string[] = [];
  // Lines are numbered from `start`: a read from a checkpoint on never saw the lines before it.
  const where = (lineNo: number) => (start === 0 ? `line ${lineNo}` : `line ${lineNo} from byte ${start}`);
  let offset = 0;
  let lineNo = 0;
  while (offset < text.length) {
    const end = text.indexOf('\n', offset);
    const complete = end !== -1;
    const line = text.slice(offset, complete ? end : text.length);
    lineNo++;
    const next = complete ? end + 1 : text.length;
    if (line.trim() === '' || (complete && select !== undefined && !select(line))) {
      offset = next;
      continue;
    }
    const record = parseLine(line);
    if (record.ok && complete) {
      records.push(record.value);
    } else if (!record.ok && record.version !== undefined) {
      throw unsupportedVersion(file, `${where(lineNo)} has`, record.version);
    } else if (!complete && !line.includes('\u0000')) {
      // Only an unterminated last line can be a torn write; it never was acknowledged (a flush
      // resolves after the record's "\n"). Dropped even when its JSON happens to be whole: kept,
      // the next append would be glued onto it and corrupt the log.
      warnings.push(`${file}: dropped a torn last record at ${where(lineNo)} (${Buffer.byteLength(line)} bytes).`);
      return { records, warnings, validBytes: start + Buffer.byteLength(text.slice(0, offset)) };
    } else {
      throw corrupt(file, `${where(lineNo)} is not a valid record: ${record.ok ? 'unterminated' : record.reason}`, start === 0 ? lineNo : undefined);
    }
    offset = next;
  }
  return { records, warnings, validBytes: start + buffer.length };
}

export type ParsedLine =
  | { readonly ok: true; readonly value: LogRecord }
  /** `version`: the record has a schema version other than this actorloop's. */
  | { readonly ok: false; readonly reason: string; readonly version?: number };

export function parseLine(line: string): ParsedLine {
  const json = safeJsonParse(line);
  if (!json.ok) return { ok: false, reason: json.reason };
  const version = (json.value as { v?: unknown } | null)?.v;
  if (typeof version === 'number' && Number.isInteger(version) && version > 0 && version !== LOG_VERSION) {
    return { ok: false, reason: `schema version ${version}, not ${LOG_VERSION}`, version };
  }
  const parsed = LogRecord.safeParse(json.value);
  if (!parsed.success) return { ok: false, reason: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') };
  return { ok: true, value: parsed.data };
}

function unsupportedVersion(file: string, where: string, version: number): StoreError {
  const advice =
    version > LOG_VERSION
      ? 'Upgrade actorloop to read it.'
      : 'It was written by an earlier pre-release of actorloop and cannot be read by this one: delete it, or read it with that pre-release.';
  return new StoreError('unsupported_version', `${file} ${where} schema version ${version}; this actorloop reads version ${LOG_VERSION} only. ${advice}`, { file });
}

/** CorruptFileError for `file`, a copy of which is kept aside first. */
export function corrupt(file: string, what: string, line: number | undefined): CorruptFileError {
  const aside = `${file}.corrupt`;
  let kept = '';
  try {
    copyFileSync(file, aside);
    kept = ` A copy was kept at ${aside}.`;
  } catch {
    // Keeping a copy is best effort; the original is never modified either way.
  }
  return new CorruptFileError(
    `${file} is corrupt: ${what}. It was left untouched.${kept} Inspect or remove it; actorloop will not overwrite it.`,
    { file, ...(line === undefined ? {} : { line }) },
  );
}

/** Where a run's records go: its own log file, or its store's shared journal segment. */
export interface RunLog {
  readonly file: string;
  append(record: LogRecord): void;
  /** Append a record already serialised as one line of JSON (no newline). */
  appendLine(json: string): void;
  flush(): Promise<void>;
  /** Write everything appended, now; `head` (a line of JSON) goes first. */
  flushSync(head?: string): void;
  flushBehind(collect?: () => void): Promise<void>;
  /** Where the next line appended will start in the file, for a log that knows (a checkpoint is found again by it). */
  readonly end?: number;
  /** Everything appended is in the file when this resolves; the run appends nothing more. */
  close(): Promise<void>;
  /** Close without writing what is pending: the run is no longer this writer's. */
  abandon(): void;
}

/** Appends records to one log file. One writer per file (the run lock guarantees it). */
export class RunLogWriter implements RunLog {
  readonly file: string;
  /** -1 until the file is created (see `create: 'background'`). */
  #fd: number;
  /** The file is still to be created: by the first background write, or else by `close`. */
  #uncreated = false;
  /** The background creation, until its file descriptor is this writer's. */
  #opening: Promise<void> | undefined;
  /** The file's name is new and random (see `fresh`): nobody else creates a file by it. */
  readonly #fresh: boolean;
  #pending: string[] = [];
  #closed = false;
  /**
   * Set while `close` or `settle` waits: the background drain writes what is left
   * synchronously instead of on the pool (the caller waits for the write anyway).
   */
  #waiters = 0;
  /** Characters written so far: about the bytes, as the JSON of ids, numbers and statuses is ASCII. */
  #written = 0;
  /** Bytes this writer appended: a log that has more was written by someone else too. */
  #bytes = 0;
  /** The file's length when this writer opened it. */
  #base = 0;
  /** The background write loop while one runs (see `flushBehind`). */
  #behind: Promise<void> | undefined;
  /** The write the loop has on the thread pool, while it is there. */
  #poolWrite: Promise<void> | undefined;
  /** Append what callers buffered, right before each background batch (see `flushBehind`). */
  readonly #collects = new Set<() => void>();

  /**
   * Open for appending. `create` makes a new file and fails with EEXIST when there is one (one
   * open, no other file-system call: creating files is what a new run pays for). `create:
   * 'background'` defers the creation, for a log written only with `flushBehind`: the first
   * background write creates it on libuv's thread pool, where it overlaps the caller's work (a
   * creation is one of the dearest things a run does, much dearer for a while after many files
   * are deleted), and a failure (EEXIST included) rejects that write and `close`. A log closed before
   * its caller ever yielded to the event loop is created by `close`, synchronously: handing a
   * request to the pool costs the caller about as much as the creation (waking a pool thread,
   * then handling its report), and such a run would only wait for it. `fresh` says the name is
   * new and random (a run id the store generated), so no other writer ever creates it: `close`
   * then need not wait for a creation's report (see `#openOwn`).
   * `truncateTo` cuts a torn tail left by a crash before the first append.
   */
  constructor(file: string, options: { truncateTo?: number; create?: boolean | 'background'; fresh?: boolean } = {}) {
    this.file = file;
    this.#fresh = options.fresh === true;
    if (options.create === 'background') {
      this.#fd = -1;
      this.#uncreated = true;
      return;
    }
    if (options.create === true) {
      this.#fd = openSync(file, 'ax');
      return;
    }
    this.#fd = openSync(file, 'r+');
    if (options.truncateTo !== undefined) ftruncateSync(this.#fd, options.truncateTo);
    this.#base = options.truncateTo ?? fstatSync(this.#fd).size;
    closeSync(this.#fd);
    this.#fd = openSync(file, 'a');
  }

  append(record: LogRecord): void {
    if (this.#closed) return;
    this.#pending.push(JSON.stringify(record));
  }

  /** Append a record already serialised as one line of JSON (no newline). */
  appendLine(json: string): void {
    if (this.#closed) return;
    this.#pending.push(json);
  }

  get pendingCount(): number {
    return this.#pending.length;
  }

  /** Bytes written to the file by this writer so far. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Where the next line appended will start: the file's length once everything appended is
   * written. Not while a background write is in flight (its batch is counted nowhere yet).
   */
  get end(): number {
    let end = this.#base + this.#bytes;
    for (const line of this.#pending) end += Buffer.byteLength(line) + 1;
    return end;
  }

  /** Characters written to the file by this writer so far. */
  get written(): number {
    return this.#written;
  }

  /**
   * Write everything appended so far. The append happens now, synchronously (one syscall per
   * batch): when this returns, the batch is in the file, so a crash right after cannot lose it.
   * Returns a promise for callers that treat durability as asynchronous.
   */
  flush(): Promise<void> {
    try {
      this.flushSync();
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  flushSync(head?: string): void {
    if (head !== undefined) this.#pending.unshift(head);
    if (this.#pending.length === 0 || this.#closed) return;
    if (this.#poolWrite !== undefined || this.#opening !== undefined) {
      // Written now, this batch could land before the one in flight: the log would be out of order.
      throw new Error(`${this.file}: a synchronous flush while a background write is in flight would reorder the log; await flushBehind() first.`);
    }
    if (this.#uncreated) this.#createNow();
    const batch = `${this.#pending.join('\n')}\n`;
    this.#pending = [];
    this.#written += batch.length;
    this.#bytes += writeSync(this.#fd, batch);
  }

  /**
   * Write everything appended so far in the background (write-behind): the write starts once
   * the caller's burst of work yields to the event loop, and the syscall runs on libuv's thread
   * pool, not on the caller's. One write is in flight at a time and each takes everything
   * pending when it starts, so batches land in order and a busy run coalesces them (a run whose
   * phases never wait for I/O writes once). `collect`, kept for later calls until `forget`, is
   * called right before each batch is taken, to append what the caller buffered as late as
   * possible (so a caller serialises once per write, not once per call). Resolves when every line appended
   * before the call, and what `collect` appended, is in the file; rejects if a write or `collect`
   * fails (that batch is lost; later lines are still written by the next call).
   */
  flushBehind(collect?: () => void): Promise<void> {
    if (collect !== undefined) this.#collects.add(collect);
    if (this.#behind !== undefined) return this.#behind;
    if (this.#closed || (this.#pending.length === 0 && this.#opening === undefined && this.#collects.size === 0)) return Promise.resolve();
    // The drain awaits before it can finish, so `#behind` is set before its `finally` clears it.
    this.#behind = this.#drain();
    return this.#behind;
  }

  async #drain(): Promise<void> {
    try {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.#uncreated && !this.#closed) this.#createInBackground();
      await this.#opened();
      for (;;) {
        for (const collect of this.#collects) collect();
        if (this.#pending.length === 0) break;
        // Someone waits for this write anyway, and a pool round trip costs more.
        if (this.#waiters > 0) {
          this.flushSync();
          continue;
        }
        const batch = `${this.#pending.join('\n')}\n`;
        this.#pending = [];
        this.#written += batch.length;
        this.#poolWrite = new Promise<void>((resolve, reject) =>
          write(this.#fd, batch, (error, bytes) => {
            this.#bytes += bytes;
            return error === null ? resolve() : reject(error);
          }),
        );
        try {
          await this.#poolWrite;
        } finally {
          this.#poolWrite = undefined;
        }
      }
    } finally {
      this.#behind = undefined;
    }
  }

  /** Stop calling `collect` (given to `flushBehind`) before background writes. */
  forget(collect: () => void): void {
    this.#collects.delete(collect);
  }

  /** Create the file here, synchronously (EEXIST if there is one: it is left alone). */
  #createNow(): void {
    this.#fd = openSync(this.file, 'ax');
    this.#uncreated = false;
  }

  /** Create the file on the thread pool; `#opening` settles when the pool reports. */
  #createInBackground(): void {
    this.#uncreated = false;
    this.#opening = new Promise<void>((resolve, reject) =>
      open(this.file, 'ax', (error, fd) => {
        if (this.#fd === -1) {
          if (error === null) this.#fd = fd;
          return error === null ? resolve() : reject(error);
        }
        // `close` opened or created the file itself before this report arrived (see
        // `#openOwn`): this descriptor is spare, and an EEXIST means `close` created it first.
        if (error === null) closeSync(fd);
        resolve();
      }),
    );
    // Observed here so a log closed before the drain awaits it leaves no unhandled rejection.
    this.#opening.catch(() => undefined);
  }

  /** Wait for a background creation (see `create: 'background'`), if one is under way. */
  async #opened(): Promise<void> {
    if (this.#opening === undefined) return;
    await this.#opening;
    this.#opening = undefined;
  }

  abandon(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#pending = [];
    // A write already on the thread pool finishes on its own descriptor; it is closed after it.
    const fd = this.#fd;
    if (fd !== -1) void Promise.resolve(this.#poolWrite).finally(() => closeSync(fd)).catch(() => undefined);
  }

  /** Write what is left and close the file (see `settle`). */
  async close(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.settle();
    } finally {
      this.#closed = true;
      if (this.#fd !== -1) closeSync(this.#fd);
    }
  }

  /**
   * Write what is left, now, and keep the file open: when this resolves, every line appended
   * before the call is in the file. A write on the thread pool lands first; a file not yet
   * created is created now, and one still being created on the pool is waited for (unless its
   * name is fresh: see `#openOwn`); the rest is written synchronously, without waiting for a
   * background write that has not started (it finds nothing left to write).
   */
  async settle(): Promise<void> {
    if (this.#closed) return;
    this.#waiters++;
    try {
      await this.#poolWrite;
      if (this.#uncreated) this.#createNow();
      else if (this.#opening !== undefined && this.#fresh) this.#openOwn();
      await this.#opened();
      this.flushSync();
    } finally {
      this.#waiters--;
    }
  }

  /**
   * A run that waited for I/O once, and then no more, reaches `close` before the event loop
   * could report the creation its first background write started. Waiting for the report costs
   * a turn of the loop. A fresh name is nobody
   * else's, so the file by that name is this writer's whoever creates it: open it if it exists
   * (a lookup), else create it here; whichever of this and the pool's creation comes second
   * finds it existing and yields to the first.
   */
  #openOwn(): void {
    const append = constants.O_WRONLY | constants.O_APPEND;
    try {
      this.#fd = openSync(this.file, append);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return; // the creation's report says what is wrong
      try {
        this.#fd = openSync(this.file, append | constants.O_CREAT | constants.O_EXCL);
      } catch (again) {
        if ((again as NodeJS.ErrnoException).code !== 'EEXIST') return;
        this.#fd = openSync(this.file, append); // the pool created it in between
      }
    }
    this.#opening = undefined;
  }
}

/** The header is the first line; a task of 1000 characters stays far below this even escaped. */
const HEADER_READ_BYTES = 64 * 1024;

/**
 * The `run` header of a log, reading only its first line: what the run index needs of a run
 * that has no meta.json yet. `null` when the log has no header (a run that crashed between
 * creating its log and writing the header). Throws like {@link readRunLog} when the first line is
 * complete but not a valid record.
 */
export function readRunHeader(file: string): RunHeaderRecord | null {
  const fd = openSync(file, 'r');
  let text: string;
  try {
    const buffer = Buffer.alloc(HEADER_READ_BYTES);
    text = buffer.toString('utf8', 0, readSync(fd, buffer, 0, HEADER_READ_BYTES, 0));
  } finally {
    closeSync(fd);
  }
  const end = text.indexOf('\n');
  if (end === -1) {
    // Empty, or a header torn before its newline: never acknowledged. Anything else (NUL bytes a lost write left, foreign text) is damage.
    if (text === '' || (text.startsWith('{') && !text.includes('\u0000'))) return null;
    throw corrupt(file, 'line 1 is not a record and has no end (NUL bytes, or text that is not JSON)', 1);
  }
  const record = parseLine(text.slice(0, end));
  if (!record.ok) {
    if (record.version !== undefined) throw unsupportedVersion(file, 'line 1 has', record.version);
    throw corrupt(file, `line 1 is not a valid record: ${record.reason}`, 1);
  }
  return record.value.kind === 'run' ? record.value : null;
}

/** An `end` record is a few hundred bytes; a last line longer than this is something else. */
const END_READ_BYTES = 4 * 1024;

/**
 * The `end` record of a log, reading only its last line: how a finished run ended. `null` while
 * the run has not ended, including a last line torn by a crash (never acknowledged: the run
 * resumes). Throws like {@link readRunLog} when the last line is complete, looks like an end
 * record and is not a valid one.
 */
export function readRunEnd(file: string): RunEndRecord | null {
  const fd = openSync(file, 'r');
  let text: string;
  let whole: boolean;
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, END_READ_BYTES);
    whole = length === size;
    const buffer = Buffer.alloc(length);
    text = buffer.toString('utf8', 0, readSync(fd, buffer, 0, length, size - length));
  } finally {
    closeSync(fd);
  }
  if (!text.endsWith('\n')) return null;
  const previous = text.lastIndexOf('\n', text.length - 2);
  if (previous === -1 && !whole) return null; // the last line is longer than any end record
  const line = text.slice(previous + 1, -1);
  if (!line.includes('"kind":"end"')) return null;
  const record = parseLine(line);
  if (!record.ok) {
    if (record.version !== undefined) throw unsupportedVersion(file, 'ends with a record of', record.version);
    throw corrupt(file, `the last line is not a valid record: ${record.reason}`, undefined);
  }
  return record.value.kind === 'end' ? record.value : null;
}
