/**
 * The error of the scripted model. A script that runs out blames the test author (`user`): it
 * is part of the test, not of the code under test; a stream cut on purpose blames the
 * (scripted) provider, as a dropped connection would.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';
import type { CodesOf } from '../core/errorCodes.ts';

/**
 * The scripted model could not answer as a real one would; `code` says why:
 * - `script_exhausted`: it was called more times than its script has steps; `steps` is how
 *   many the script had (for a function script: how many it answered), `callIndex` the
 *   zero-based index of the call that found none;
 * - `stream_cut`: the default error of a step's `streamCut`: the stream ended mid-response.
 *
 * @example
 * ```ts
 * const model = scriptedModel([{ text: 'hi' }]);
 * await model.complete({ messages });
 * await model.complete({ messages }); // rejects: ScriptedModelError, code 'script_exhausted', steps === 1, callIndex === 1
 * ```
 */
export class ScriptedModelError extends ActorloopError {
  declare readonly code: CodesOf<'ScriptedModelError'>;
  /** For `script_exhausted`: how many steps the script had. */
  readonly steps: number | undefined;
  /** For `script_exhausted`: zero-based index of the call that found no step. */
  readonly callIndex: number | undefined;

  private constructor(code: CodesOf<'ScriptedModelError'>, message: string, fields: { readonly steps?: number; readonly callIndex?: number }, options: ActorloopErrorOptions) {
    super(code, message, options);
    this.steps = fields.steps;
    this.callIndex = fields.callIndex;
  }

  static exhausted(steps: number, callIndex: number, options: ActorloopErrorOptions = {}): ScriptedModelError {
    return new ScriptedModelError(
      'script_exhausted',
      `The scripted model's script has ${steps} step${steps === 1 ? '' : 's'}, all used; call ${callIndex + 1} has none. ` +
        'Add a step for it, or check why the code under test called the model again.',
      { steps, callIndex },
      options,
    );
  }

  static streamCut(afterEvents: number, options: ActorloopErrorOptions = {}): ScriptedModelError {
    return new ScriptedModelError(
      'stream_cut',
      `The scripted stream was cut after ${afterEvents} event${afterEvents === 1 ? '' : 's'} (as the script asked). ` +
        'Discard the partial reply and retry the step.',
      {},
      options,
    );
  }
}
