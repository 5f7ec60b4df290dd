/**
 * The default of an actor a machine names but the runtime supplies: it fails with a message
 * saying how to provide it, so a forgotten `.provide()` is an error the caller can act on.
 */
import { fromPromise } from 'xstate';

/**
 * @example
 * ```ts
 * setup({ actors: { step: notProvided<StepOutput, StepInput>('strategy', 'step') } });
 * ```
 */
export function notProvided<TOutput, TInput>(machine: string, actor: string) {
  return fromPromise<TOutput, TInput>(async () => {
    throw new Error(`The ${machine} machine's "${actor}" actor has no implementation: supply one with ${machine}Machine.provide({ actors: { ${actor} } }).`);
  });
}
