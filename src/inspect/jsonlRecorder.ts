/**
 * `createJsonlRecorder`: record every inspection event of an agent (or any XState actor) to a
 * JSONL file for offline inspection — one sanitised `InspectionRecord` per line.
 *
 * Lines go through one append-mode write stream, never a whole-file rewrite, so recording cost
 * stays proportional to the event and a crash loses at most the unflushed tail (which a reader
 * drops as a torn last line).
 */
import { createWriteStream } from 'node:fs';
import type { InspectionEvent, Observer } from 'xstate';
import { InspectorError } from './errors.ts';
import { toInspectionRecord } from './record.ts';
import { createSanitizer, type SanitizeOptions } from '../security/sanitize.ts';

export interface JsonlRecorderOptions {
  /** Extra redaction rules and limits (the defaults always apply). */
  readonly redact?: SanitizeOptions;
  /**
   * Bytes allowed to wait in the stream's buffer (a slow disk); past it, records are dropped and
   * counted in `dropped` instead of growing memory. Default 16 MiB.
   */
  readonly maxBufferedBytes?: number;
}

/** A recording in progress. */
export interface JsonlRecorder {
  /** Pass to `createAgent({ observe: { inspect } })` or `createActor(logic, { inspect })`. */
  readonly inspect: Observer<InspectionEvent>;
  readonly filePath: string;
  /** Records written (queued on the stream) so far. */
  readonly recorded: number;
  /** Records dropped because the stream's buffer was full. */
  readonly dropped: number;
  /** Stop recording, flush and close the file. Rejects with an InspectorError if a write failed. Idempotent. */
  close(): Promise<void>;
}

/**
 * Start recording to `filePath` (appended to when it exists).
 *
 * @example
 * ```ts
 * const recorder = createJsonlRecorder('runs/inspect.jsonl');
 * const agent = createAgent({ model, tools, observe: { inspect: recorder.inspect } });
 * await agent.run('What is 6 * 7?');
 * await recorder.close();
 * ```
 */
export function createJsonlRecorder(filePath: string, options: JsonlRecorderOptions = {}): JsonlRecorder {
  const clean = createSanitizer(options.redact);
  const maxBufferedBytes = options.maxBufferedBytes ?? 16 * 1024 * 1024;
  const stream = createWriteStream(filePath, { flags: 'a', encoding: 'utf8' });
  let failure: InspectorError | undefined;
  // Without a listener a write error would be thrown as an uncaught exception.
  stream.on('error', (cause: unknown) => {
    failure ??= InspectorError.recording(filePath, { cause });
  });
  let seq = 0;
  let dropped = 0;
  let closing: Promise<void> | undefined;

  const inspect: Observer<InspectionEvent> = {
    next(event) {
      if (closing !== undefined || failure !== undefined) return;
      // XState calls observers synchronously from inside transitions: never throw back into it.
      try {
        if (stream.writableLength > maxBufferedBytes) {
          dropped++;
          return;
        }
        const record = toInspectionRecord(event, seq, Date.now(), clean);
        if (record === undefined) return;
        seq++;
        stream.write(`${JSON.stringify(record)}\n`);
      } catch {
        dropped++;
      }
    },
  };

  return {
    inspect,
    filePath,
    get recorded() {
      return seq;
    },
    get dropped() {
      return dropped;
    },
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        const settle = () => (failure === undefined ? resolve() : reject(failure));
        if (stream.closed) return settle();
        // 'close' comes after the last write reached the file, and also after an error.
        stream.once('close', settle);
        stream.end();
      });
      return closing;
    },
  };
}
