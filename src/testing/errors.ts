/**
 * Errors of the scripted model. They blame the test author (`user`): a script that runs out
 * or is cut on purpose is part of the test, not of the code under test.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';

/**
 * The scripted model was called more times than its script has steps.
 *
 * @example
 * ```ts
 * const model = scriptedModel([{ text: 'hi' }]);
 * await model.complete({ messages });
 * await model.complete({ messages }); // rejects: ScriptExhaustedError, steps === 1, callIndex === 1
 * ```
 */
export class ScriptExhaustedError extends ActorloopError {
  readonly code = 'script_exhausted' as const;
  readonly blame = 'user' as const;
  /** How many steps the script had (for a function script: how many it answered). */
  readonly steps: number;
  /** Zero-based index of the call that found no step. */
  readonly callIndex: number;

  constructor(steps: number, callIndex: number, options: ActorloopErrorOptions = {}) {
    super(
      `The scripted model's script has ${steps} step${steps === 1 ? '' : 's'}, all used; call ${callIndex + 1} has none. ` +
        'Add a step for it, or check why the code under test called the model again.',
      options,
    );
    this.steps = steps;
    this.callIndex = callIndex;
  }
}

/**
 * The default error of a step's `streamCut`: the stream ended mid-response, as a dropped
 * connection would end it.
 *
 * @example
 * ```ts
 * scriptedModel([{ text: 'partial answer', streamCut: { afterEvents: 1 } }]);
 * // stream() yields one text.delta, then throws ScriptedStreamCutError
 * ```
 */
export class ScriptedStreamCutError extends ActorloopError {
  readonly code = 'stream_cut' as const;
  readonly blame = 'provider' as const;

  constructor(afterEvents: number, options: ActorloopErrorOptions = {}) {
    super(
      `The scripted stream was cut after ${afterEvents} event${afterEvents === 1 ? '' : 's'} (as the script asked). ` +
        'Discard the partial reply and retry the step.',
      options,
    );
  }
}
