// One append-mode stream, never a rewrite: a crash loses at most the unflushed tail, which a reader drops as a torn line.
import { createWriteStream } from 'node:fs';
import type { InspectionEvent, Observer } from 'xstate';
import { InspectorError } from './errors.ts';
import { toInspectionRecord } from './record.ts';
import { createSanitizer, type SanitizeOptions } from '../security/sanitize.ts';

export interface JsonlRecorderOptions {
  /** The default redaction rules always apply. */
  readonly redact?: SanitizeOptions;
  /** Past it (a slow disk), records are dropped and counted in `dropped` instead of growing memory. */
  readonly maxBufferedBytes?: number;
}

export interface JsonlRecorder {
  readonly inspect: Observer<InspectionEvent>;
  readonly filePath: string;
  readonly recorded: number;
  readonly dropped: number;
  /** Rejects with an InspectorError (`inspection_recording`) if a write failed. */
  close(): Promise<void>;
}

/**
 * Appends to `filePath` when it exists.
 * @example
 * ```ts
 * const recorder = createJsonlRecorder('runs/inspect.jsonl');
 * const agent = createAgent({ model, observe: { inspect: recorder.inspect } });
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
