/** Cheap by design, since benchmarks measure the loop around it: no timer without a delay, requests recorded by reference. */
import { sleep } from '../resilience/backoff.ts';
import type { Completion, CompletionRequest, InferenceProvider, StreamEvent } from '../core/provider.ts';
import { ScriptedModelError } from './errors.ts';
import { buildCompletion, makeError, type Script, type ScriptStep } from './scriptStep.ts';
import { completionEvents } from './streamEvents.ts';

function completionOf<TOutput>(answered: { completion: Completion<TOutput> }): Completion<TOutput> {
  return answered.completion;
}

export interface ScriptedModelOptions {
  readonly name?: string;
  /** Reported as `completion.model` unless the request names a model. Default `scripted-model`. */
  readonly defaultModel?: string;
  /** Default true; set false to exercise the loop's path for models without native tools. */
  readonly supportsNativeTools?: boolean;
  /** Default true; set false to exercise the loop's path for models without structured output. */
  readonly supportsStructuredOutput?: boolean;
  /** Default true. Each recorded request pins its conversation, so long benchmark runs set false. */
  readonly recordCalls?: boolean;
}

export interface ScriptedModel extends InferenceProvider {
  /** As given, not copied; empty with `recordCalls: false`. */
  readonly calls: readonly CompletionRequest[];
  /** Steps not yet used; `Infinity` for a function script. */
  readonly remaining: number;
}

function settleStep<TOutput>(step: ScriptStep, request: CompletionRequest<TOutput>, callIndex: number, model: string): { step: ScriptStep; completion: Completion<TOutput> } {
  if (step.error !== undefined) throw makeError(step.error);
  return { step, completion: buildCompletion(step, request, callIndex, model) };
}

/**
 * The n-th call gets the n-th step. An already-aborted call uses no step; one aborted during `delayMs` does (the request reached the model).
 * @example
 * ```ts
 * const model = scriptedModel([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: '3' }]);
 * ```
 */
export function scriptedModel(script: Script, options: ScriptedModelOptions = {}): ScriptedModel {
  const calls: CompletionRequest[] = [];
  const record = options.recordCalls ?? true;
  let callCount = 0;
  const defaultModel = options.defaultModel ?? 'scripted-model';

  /** Record the call and pick its step (synchronously: no await before the step is taken). */
  const take = (request: CompletionRequest): { step: ScriptStep; callIndex: number } => {
    if (request.signal?.aborted === true) throw request.signal.reason;
    const callIndex = callCount++;
    if (record) calls.push(request);
    const step = typeof script === 'function' ? script(request, callIndex) : script[callIndex];
    if (step === undefined) throw ScriptedModelError.exhausted(typeof script === 'function' ? callIndex : script.length, callIndex);
    return { step, callIndex };
  };

  /** Shared by complete() and stream() so they agree; without a delay nothing is awaited. */
  function answer<TOutput>(request: CompletionRequest<TOutput>): Promise<{ step: ScriptStep; completion: Completion<TOutput> }> {
    try {
      const { step, callIndex } = take(request as CompletionRequest);
      const model = request.model ?? defaultModel;
      if (step.delayMs !== undefined && step.delayMs > 0) return sleep(step.delayMs, request.signal).then(() => settleStep(step, request, callIndex, model));
      return Promise.resolve(settleStep(step, request, callIndex, model));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  return {
    name: options.name ?? 'scripted',
    defaultModel,
    supportsNativeTools: options.supportsNativeTools ?? true,
    supportsStructuredOutput: options.supportsStructuredOutput ?? true,
    get calls(): readonly CompletionRequest[] {
      return calls;
    },
    get remaining(): number {
      return typeof script === 'function' ? Infinity : Math.max(0, script.length - callCount);
    },
    complete<TOutput = unknown>(request: CompletionRequest<TOutput>): Promise<Completion<TOutput>> {
      return answer(request).then(completionOf);
    },
    async *stream<TOutput = unknown>(request: CompletionRequest<TOutput>): AsyncIterable<StreamEvent<TOutput>> {
      const { step, completion } = await answer(request);
      const cut = step.streamCut;
      let emitted = 0;
      for (const event of completionEvents(completion, step.chunks)) {
        // A consumer that aborts mid-stream stops getting events, as with a real connection.
        if (request.signal?.aborted === true) throw request.signal.reason;
        if (cut !== undefined && emitted >= cut.afterEvents) {
          throw cut.error === undefined ? ScriptedModelError.streamCut(emitted) : makeError(cut.error);
        }
        emitted++;
        yield event;
      }
    },
  };
}
