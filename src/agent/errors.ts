/**
 * Why a run did not end with an answer. Each error carries the run's `LoopResult` (partial
 * conversation, usage, iterations) and its `runId`.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';
import type { CodesOf } from '../core/errorCodes.ts';
import type { LoopResult } from '../core/run.ts';
import type { HookName } from '../core/loopEvent.ts';

interface RunErrorOptions extends ActorloopErrorOptions {
  readonly result: LoopResult;
}

type RunErrorCode = CodesOf<'RunError'> | CodesOf<'RunLimitError'> | CodesOf<'RunCancelledError'>;

/**
 * Why a run did not end with an answer, with the run's partial `result`. `code` says which:
 * `model_repair_exhausted`, `stuck`, `model_refused`, `reply_truncated` or `unexpected` here, and
 * the subclasses below for limits and cancellation.
 *
 * @example
 * ```ts
 * try { await agent.run(task); } catch (e) { if (e instanceof RunError && e.code === 'stuck') console.log(e.runId, e.result.error?.message); }
 * ```
 */
export class RunError extends ActorloopError {
  declare readonly code: RunErrorCode;
  readonly result: LoopResult;
  constructor(code: RunErrorCode, message: string, options: RunErrorOptions) {
    super(code, message, { ...options, runId: options.result.runId });
    this.result = options.result;
  }
}

/**
 * The run reached one of its `limits` without a final answer: `max_iterations`, `max_tokens` or
 * `run_timeout`. Raise the limit, or resume the run.
 *
 * @example
 * ```ts
 * try { await agent.run(task); } catch (e) { if (e instanceof RunLimitError) console.log(e.code, e.runId); }
 * ```
 */
export class RunLimitError extends RunError {
  declare readonly code: CodesOf<'RunLimitError'>;
  constructor(code: CodesOf<'RunLimitError'>, message: string, options: RunErrorOptions) {
    super(code, message, options);
  }
}

/** The run was cancelled by its caller (`run_cancelled`). */
export class RunCancelledError extends RunError {
  declare readonly code: CodesOf<'RunCancelledError'>;
  constructor(message: string, options: RunErrorOptions) {
    super('run_cancelled', message, options);
  }
}

/**
 * A lifecycle hook failed the run. `hook_failed`: it threw, did not settle within
 * `hooks.timeoutMs`, or returned something that is not a decision; the run fails closed (no call
 * the hook was guarding is made). `model_call_blocked`: a `beforeModelCall` hook blocked the
 * model call, and `reason` is its reason. `hook` names the hook.
 *
 * @example
 * ```ts
 * try { await agent.run(task); } catch (e) { if (e instanceof HookError) console.log(e.code, e.hook, e.cause); }
 * ```
 */
export class HookError extends ActorloopError {
  declare readonly code: CodesOf<'HookError'>;
  readonly hook: HookName;
  /** For `model_call_blocked`: why the hook blocked the call. */
  readonly reason: string | undefined;

  private constructor(code: CodesOf<'HookError'>, hook: HookName, message: string, reason: string | undefined, options: ActorloopErrorOptions) {
    super(code, message, options);
    this.hook = hook;
    this.reason = reason;
  }

  static failed(hook: HookName, message: string, options: ActorloopErrorOptions = {}): HookError {
    return new HookError('hook_failed', hook, message, undefined, options);
  }

  static modelCallBlocked(reason: string, options: ActorloopErrorOptions = {}): HookError {
    return new HookError('model_call_blocked', 'beforeModelCall', `The beforeModelCall hook blocked the model call: ${reason}`, reason, options);
  }
}

/**
 * What a failed run rejects with: a typed error that always carries the run's `result` (and
 * `runId`), whether it is one of the run errors above or a typed error that ended the run.
 *
 * @example
 * ```ts
 * try { await agent.run(task); } catch (e) { if (e instanceof ActorloopError) console.log((e as RunFailure).result.messages); }
 * ```
 */
export type RunFailure = ActorloopError & { readonly result: LoopResult };

/**
 * The typed error a non-successful `LoopResult` stands for.
 *
 * @example
 * ```ts
 * const error = errorForResult(result); // e.g. a RunLimitError with code 'max_iterations', and error.result === result
 * ```
 */
export function errorForResult(result: LoopResult): RunFailure {
  const { runId, iterations } = result;
  const options = { result };
  switch (result.reason) {
    case 'max_iterations':
      return new RunLimitError('max_iterations',
        `Run ${runId} stopped after ${iterations} iterations without a final answer. Raise limits.maxIterations, simplify the task, or resume it.`,
        options,
      );
    case 'max_tokens':
      return new RunLimitError('max_tokens',
        `Run ${runId} used ${result.usage.totalTokens} tokens without a final answer. Raise limits.maxTotalTokens or enable a context budget.`,
        options,
      );
    case 'timeout':
      return new RunLimitError('run_timeout', `Run ${runId} exceeded its wall-clock limit. Raise limits.timeoutMs or give tools shorter timeouts.`, options);
    case 'cancelled':
      return new RunCancelledError(`Run ${runId} was cancelled; in-flight model and tool calls were aborted.`, options);
    case 'model_behavior':
      if (result.error?.code === 'structured_output') {
        return new RunError('model_repair_exhausted',
          `Run ${runId}: the model's final answer still did not match the output schema after every repair turn (limits.maxRepairTurns). Last problem: ${result.error.message} Describe the expected answer in the system prompt, simplify the schema, or use a stronger model.`,
          options,
        );
      }
      return new RunError('model_repair_exhausted',
        `Run ${runId}: the model kept proposing malformed or unknown tool calls. Check the tool descriptions and schemas, or use a stronger model.`,
        options,
      );
    case 'refusal':
      return new RunError('model_refused',
        `Run ${runId}: ${result.error?.message ?? 'the model refused to answer'}. Rephrase the task or use another model.`,
        options,
      );
    case 'length':
      return new RunError('reply_truncated',
        `Run ${runId}: ${result.error?.message ?? "the model's reply was cut off at the output-token cap"}. Raise model.maxTokens, ` +
          "or set onLength: { continue: n } to let the model go on.",
        options,
      );
    case 'stuck':
      return new RunError('stuck',
        `Run ${runId} was stopped as stuck in a loop: ${result.error?.message ?? 'it kept repeating itself'}. Give the model a tool or hint that lets it make progress, use stuckDetection: { action: 'redirect' } to warn it first, raise stuckDetection.maxRepeats, or turn detection off with stuckDetection: false.`,
        options,
      );
    default: {
      const cause = result.cause;
      if (cause instanceof ActorloopError) {
        cause.runId = runId;
        // Keep the original class (callers branch on it, e.g. AuthenticationError) but honour
        // the run contract: the partial result travels with the error. Not enumerable, so
        // logging or serialising the error does not dump the conversation.
        Object.defineProperty(cause, 'result', { value: result, configurable: true, writable: true, enumerable: false });
        return cause as RunFailure;
      }
      return new RunError('unexpected',
        `Run ${runId} failed: ${result.error?.message ?? 'unknown error'}. This is likely a bug in a custom actor or tool wrapper.`,
        { result, cause },
      );
    }
  }
}
