/**
 * The error of the inspector and the inspection recorder.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';
import type { CodesOf } from '../core/errorCodes.ts';

/**
 * The inspector could not do its job; `code` says which part failed:
 * - `inspector_start`: its local server could not start (most often: the port is taken);
 *   `port` is the one asked for;
 * - `inspection_recording`: writing an inspection recording failed (a missing folder, a full
 *   disk, no permission); `filePath` names the file.
 *
 * @example
 * ```ts
 * try { await createInspector({ port: 8080 }); }
 * catch (e) { if (e instanceof InspectorError && e.code === 'inspector_start') console.log(e.port, e.message); }
 * ```
 */
export class InspectorError extends ActorloopError {
  declare readonly code: CodesOf<'InspectorError'>;
  /** For `inspector_start`: the port asked for. */
  readonly port: number | undefined;
  /** For `inspection_recording`: the recording's file. */
  readonly filePath: string | undefined;

  private constructor(code: CodesOf<'InspectorError'>, message: string, fields: { readonly port?: number; readonly filePath?: string }, options?: ActorloopErrorOptions) {
    super(code, message, options);
    this.port = fields.port;
    this.filePath = fields.filePath;
  }

  static start(port: number, options?: ActorloopErrorOptions): InspectorError {
    const reason = (options?.cause as { code?: unknown } | undefined)?.code;
    return new InspectorError(
      'inspector_start',
      `The inspector could not listen on 127.0.0.1:${port}${typeof reason === 'string' ? ` (${reason})` : ''}. ` +
        'Pass another `port`, or `port: 0` to let the system pick a free one.',
      { port },
      options,
    );
  }

  static recording(filePath: string, options?: ActorloopErrorOptions): InspectorError {
    const reason = options?.cause instanceof Error ? options.cause.message : String(options?.cause);
    return new InspectorError(
      'inspection_recording',
      `Could not write the inspection recording ${JSON.stringify(filePath)}: ${reason}. Check that the folder exists and is writable.`,
      { filePath },
      options,
    );
  }
}
