/**
 * A run's append-only JSONL log, appended at phase boundaries, never rewritten. A crash can tear
 * only the last line, which the reader drops with a warning; anything else unparsable is corruption.
 */
import { closeSync, constants, copyFileSync, fstatSync, ftruncateSync, open, openSync, readFileSync, readSync, write, writeSync } from 'node:fs';
import { CorruptFileError, StoreError } from './errors.ts';
import { LOG_VERSION, LogRecord, type RunEndRecord, type RunHeaderRecord } from './records.ts';
import { safeJsonParse } from './safeJson.ts';

export interface ReadLog {
  readonly records: LogRecord[];
  readonly warnings: string[];
  /** A torn tail starts here. */
  readonly validBytes: number;
}

/** Throws CorruptFileError (after copying the file aside) or StoreError (`unsupported_version`). `select` skips lines unparsed. */
export function readRunLog(file: string, select?: (line: string) => boolean): ReadLog {
  const buffer = readFileSync(file);
  if (buffer.length === 0) throw corrupt(file, 'the file is empty', undefined);
  return parseRunLog(file, buffer, 0, select);
}

/** `buffer` starts at byte `start`, where a line begins; `validBytes` counts from the file's beginning. */
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
      // Only an unterminated last line can be torn, and it was never acknowledged. Dropped even when its
      // JSON is whole: the next append would be glued onto it.
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

export function corrupt(file: string, what: string, line: number | undefined): CorruptFileError {
  const aside = `${file}.corrupt`;
  let kept = '';
  try {
    copyFileSync(file, aside);
    kept = ` A copy was kept at ${aside}.`;
  } catch {
    // Best effort; the original is never modified either way.
  }
  return new CorruptFileError(
    `${file} is corrupt: ${what}. It was left untouched.${kept} Inspect or remove it; actorloop will not overwrite it.`,
    { file, ...(line === undefined ? {} : { line }) },
  );
}

export interface RunLog {
  readonly file: string;
  append(record: LogRecord): void;
  appendLine(json: string): void;
  flush(): Promise<void>;
  /** `head` (a line of JSON) goes first. */
  flushSync(head?: string): void;
  flushBehind(collect?: () => void): Promise<void>;
  /** A checkpoint is found again by where it starts. */
  readonly end?: number;
  close(): Promise<void>;
  /** The run is no longer this writer's. */
  abandon(): void;
}

/** One writer per file: the run lock guarantees it. */
export class RunLogWriter implements RunLog {
  readonly file: string;
  #fd: number;
  #uncreated = false;
  #opening: Promise<void> | undefined;
  /** The name is new and random: nobody else creates a file by it. */
  readonly #fresh: boolean;
  #pending: string[] = [];
  #closed = false;
  /** While `close` or `settle` waits, the drain writes synchronously: the caller waits for it anyway. */
  #waiters = 0;
  /** Bytes handed to writes, whether they landed or not. */
  #written = 0;
  /** A log that has more than this was written by someone else too. */
  #bytes = 0;
  #base = 0;
  #behind: Promise<void> | undefined;
  #poolWrite: Promise<void> | undefined;
  readonly #collects = new Set<() => void>();
  /** Set when a batch landed in part and could not be cut off: nothing may follow its torn line. */
  #torn: StoreError | undefined;

  /**
 * `create` fails with EEXIST when the file exists. `create: 'background'` defers creation to the first
 * background write, on libuv's pool; a log closed before that is created by `close`. `fresh`: the name is
 * new and random, so `close` need not wait for a creation's report. `truncateTo` cuts a crash's torn tail.
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

  appendLine(json: string): void {
    if (this.#closed) return;
    this.#pending.push(json);
  }

  get pendingCount(): number {
    return this.#pending.length;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** Not while a background write is in flight: its batch is counted nowhere yet. */
  get end(): number {
    let end = this.#base + this.#bytes;
    for (const line of this.#pending) end += Buffer.byteLength(line) + 1;
    return end;
  }

  get written(): number {
    return this.#written;
  }

  /** Synchronous, so a crash right after this returns cannot lose the batch. */
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
    if (this.#torn !== undefined) throw this.#torn;
    if (this.#poolWrite !== undefined || this.#opening !== undefined) {
      throw new Error(`${this.file}: a synchronous flush while a background write is in flight would reorder the log; await flushBehind() first.`);
    }
    if (this.#uncreated) this.#createNow();
    const text = `${this.#pending.join('\n')}\n`;
    this.#pending = [];
    const total = Buffer.byteLength(text);
    this.#written += total;
    let done = 0;
    try {
      // The write encodes the text itself: no buffer is made for it.
      done = progress(writeSync(this.#fd, text));
      // The kernel may write less than asked (a signal, a nearly full disk): the rest follows.
      if (done < total) {
        const batch = Buffer.from(text);
        while (done < total) done += progress(writeSync(this.#fd, batch, done, total - done));
      }
    } catch (error) {
      throw this.#failed(done, total, error);
    }
    this.#bytes += done;
  }

  /**
   * A batch that landed in part would leave a torn line with later lines after it, which no reader
   * accepts: the part is cut off again. If that fails too, the log takes no more lines.
   */
  #failed(done: number, total: number, error: unknown): StoreError {
    const start = this.#base + this.#bytes;
    let outcome = 'Nothing of it was written.';
    let torn = false;
    if (done > 0) {
      try {
        // Only this writer's own bytes are cut: a log that grew otherwise is left as it is.
        if (fstatSync(this.#fd).size !== start + done) throw new Error('the file changed size meanwhile');
        ftruncateSync(this.#fd, start);
        outcome = 'The part written was cut off; the log ends at its last whole line.';
      } catch {
        this.#bytes += done;
        torn = true;
        outcome = 'The part written could not be cut off, so this log takes no more lines; a resume drops its torn last line.';
      }
    }
    const reason = error instanceof Error ? error.message : String(error);
    const failure = new StoreError(
      'log_write_failed',
      `${this.file}: ${done} of ${total} bytes of a batch were written before the write failed (${reason}). ${outcome} Free disk space or repair the file system, then resume the run.`,
      { file: this.file, cause: error },
    );
    if (torn) this.#torn = failure;
    return failure;
  }

  /**
 * Write-behind on libuv's pool, one write in flight at a time, each taking all that is pending, so
 * batches land in order. `collect` (kept until `forget`) runs right before each batch is taken, so a
 * caller serialises once per write. A failed write loses its batch; later lines go with the next call.
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
        // Someone waits for this write anyway.
        if (this.#waiters > 0) {
          this.flushSync();
          continue;
        }
        if (this.#torn !== undefined) throw this.#torn;
        const batch = Buffer.from(`${this.#pending.join('\n')}\n`);
        this.#pending = [];
        this.#written += batch.length;
        this.#poolWrite = this.#writeBehind(batch);
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

  /** As `flushSync` writes a batch, on libuv's pool. */
  #writeBehind(batch: Buffer): Promise<void> {
    const fd = this.#fd;
    return new Promise<void>((resolve, reject) => {
      const from = (done: number): void =>
        write(fd, batch, done, batch.length - done, null, (error, bytes) => {
          try {
            if (error !== null) throw error;
            const now = done + progress(bytes);
            if (now < batch.length) return from(now);
            this.#bytes += now;
            resolve();
          } catch (failure) {
            reject(this.#failed(done, batch.length, failure));
          }
        });
      from(0);
    });
  }

  forget(collect: () => void): void {
    this.#collects.delete(collect);
  }

  #createNow(): void {
    this.#fd = openSync(this.file, 'ax');
    this.#uncreated = false;
  }

  #createInBackground(): void {
    this.#uncreated = false;
    this.#opening = new Promise<void>((resolve, reject) =>
      open(this.file, 'ax', (error, fd) => {
        if (this.#fd === -1) {
          if (error === null) this.#fd = fd;
          return error === null ? resolve() : reject(error);
        }
        // `close` opened or created the file itself before this report arrived: this descriptor is spare,
        // and an EEXIST means `close` created it first.
        if (error === null) closeSync(fd);
        resolve();
      }),
    );
    // Observed here so a log closed before the drain awaits it leaves no unhandled rejection.
    this.#opening.catch(() => undefined);
  }

  async #opened(): Promise<void> {
    if (this.#opening === undefined) return;
    await this.#opening;
    this.#opening = undefined;
  }

  abandon(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#pending = [];
    // A write already on the pool finishes on its own descriptor; it is closed after it.
    const fd = this.#fd;
    if (fd !== -1) void Promise.resolve(this.#poolWrite).finally(() => closeSync(fd)).catch(() => undefined);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.settle();
    } finally {
      this.#closed = true;
      if (this.#fd !== -1) closeSync(this.#fd);
    }
  }

  /** Every line appended before the call is in the file when this resolves; the file stays open. */
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
 * A fresh name is nobody else's, so the file is this writer's whoever creates it: open it if it
 * exists, else create it; whichever of this and the pool's creation comes second yields to the first.
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

/** A write that took nothing and reported no error would be retried forever. */
function progress(bytes: number): number {
  if (bytes > 0) return bytes;
  throw new Error('the file system took no bytes');
}

/** Headers are small even with a long, escaped task. */
const HEADER_READ_BYTES = 64 * 1024;

/** Reads only the first line. `null` for a run that crashed between creating its log and writing the header. */
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
    // Empty, or torn before its newline: never acknowledged. Anything else (NUL bytes, foreign text) is damage.
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

const END_READ_BYTES = 4 * 1024;

/** Reads only the last line, however long. `null` until the run ended, including a torn last line (never acknowledged). */
export function readRunEnd(file: string): RunEndRecord | null {
  const fd = openSync(file, 'r');
  let text: string;
  try {
    const size = fstatSync(fd).size;
    // An end's error message (a provider's error page) can make its line longer than the first read.
    let length = Math.min(size, END_READ_BYTES);
    for (;;) {
      const buffer = Buffer.alloc(length);
      text = buffer.toString('utf8', 0, readSync(fd, buffer, 0, length, size - length));
      if (length === size || !text.endsWith('\n') || text.lastIndexOf('\n', text.length - 2) !== -1) break;
      length = Math.min(size, length * 4);
    }
  } finally {
    closeSync(fd);
  }
  if (!text.endsWith('\n')) return null;
  const line = text.slice(text.lastIndexOf('\n', text.length - 2) + 1, -1);
  if (!line.includes('"kind":"end"')) return null;
  const record = parseLine(line);
  if (!record.ok) {
    if (record.version !== undefined) throw unsupportedVersion(file, 'ends with a record of', record.version);
    throw corrupt(file, `the last line is not a valid record: ${record.reason}`, undefined);
  }
  return record.value.kind === 'end' ? record.value : null;
}
