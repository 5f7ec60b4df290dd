/**
 * Errors of the inspector and the inspection recorder.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';

/**
 * The inspector's local server could not start (most often: the port is taken).
 *
 * @example
 * ```ts
 * try { await createInspector({ port: 8080 }); }
 * catch (e) { if (e instanceof InspectorStartError) console.log(e.port, e.message); }
 * ```
 */
export class InspectorStartError extends ActorloopError {
  readonly code = 'inspector_start' as const;
  readonly blame = 'user' as const;
  readonly port: number;

  constructor(port: number, options?: ActorloopErrorOptions) {
    const reason = (options?.cause as { code?: unknown } | undefined)?.code;
    super(
      `The inspector could not listen on 127.0.0.1:${port}${typeof reason === 'string' ? ` (${reason})` : ''}. ` +
        'Pass another `port`, or `port: 0` to let the system pick a free one.',
      options,
    );
    this.port = port;
  }
}

/**
 * Writing an inspection recording failed (a missing folder, a full disk, no permission).
 *
 * @example
 * ```ts
 * const recorder = createJsonlRecorder('/no/such/dir/run.jsonl');
 * await recorder.close().catch((e: InspectionRecordingError) => console.log(e.filePath));
 * ```
 */
export class InspectionRecordingError extends ActorloopError {
  readonly code = 'inspection_recording' as const;
  readonly blame = 'runtime' as const;
  readonly filePath: string;

  constructor(filePath: string, options?: ActorloopErrorOptions) {
    const reason = options?.cause instanceof Error ? options.cause.message : String(options?.cause);
    super(`Could not write the inspection recording ${JSON.stringify(filePath)}: ${reason}. Check that the folder exists and is writable.`, options);
    this.filePath = filePath;
  }
}
