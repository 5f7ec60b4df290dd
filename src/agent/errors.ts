/**
 * Why a run did not end with an answer. Each error carries the run's `LoopResult` (partial
 * conversation, usage, iterations) and its `runId`.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';
import type { LoopResult } from '../core/run.ts';
import type { HookName } from '../core/loopEvent.ts';

interface RunErrorOptions extends ActorloopErrorOptions {
  readonly result: LoopResult;
}

abstract class RunError extends ActorloopError {
  readonly result: LoopResult;
  constructor(message: string, options: RunErrorOptions) {
    super(message, { ...options, runId: options.result.runId });
    this.result = options.result;
  }
}

/** The run reached `limits.maxIterations` without a final answer. */
export class MaxIterationsError extends RunError {
  readonly code = 'max_iterations' as const;
  readonly blame = 'runtime' as const;
}

/** The run used `limits.maxTotalTokens` without a final answer. */
export class TokenBudgetExceededError extends RunError {
  readonly code = 'max_tokens' as const;
  readonly blame = 'runtime' as const;
}

/** The run exceeded `limits.timeoutMs` of wall-clock time. */
export class RunTimeoutError extends RunError {
  readonly code = 'run_timeout' as const;
  readonly blame = 'runtime' as const;
}

/** The run was cancelled by its caller. */
export class RunCancelledError extends RunError {
  readonly code = 'run_cancelled' as const;
  readonly blame = 'user' as const;
}

/** The model kept sending unusable tool calls after every repair turn. */
export class ModelRepairExhaustedError extends RunError {
  readonly code = 'model_repair_exhausted' as const;
  readonly blame = 'model' as const;
}

/**
 * Stuck detection (on by default; `createAgent({ resilience: { stuckDetection } })`) ended the run: the model called the same
 * tool with the same arguments, or hit near-identical tool errors, too many times in a row. The
 * detector's explanation is in `result.error.message`.
 *
 * @example
 * ```ts
 * try { await agent.run(task); } catch (e) { if (e instanceof StuckLoopError) console.log(e.runId, e.result.error?.message); }
 * ```
 */
export class StuckLoopError extends RunError {
  readonly code = 'stuck' as const;
  readonly blame = 'model' as const;
}

/**
 * The model declined to answer (a `refusal` in place of content, as OpenAI models send). The
 * refusal is the error message and the last assistant message of `result.messages`.
 *
 * @example
 * ```ts
 * try { await agent.run(task); } catch (e) { if (e instanceof ModelRefusedError) console.log(e.result.error?.message); }
 * ```
 */
export class ModelRefusedError extends RunError {
  readonly code = 'model_refused' as const;
  readonly blame = 'model' as const;
}

/**
 * A reply hit the output-token cap (`finish_reason: length`) and the agent's `onLength` policy is
 * `end` (or its continuations ran out). The cut-off text is the last assistant message of
 * `result.messages`; raise `model.maxTokens` or use `onLength: { continue: n }`.
 *
 * @example
 * ```ts
 * try { await agent.run(task); } catch (e) { if (e instanceof ReplyTruncatedError) console.log(e.result.messages.at(-1)); }
 * ```
 */
export class ReplyTruncatedError extends RunError {
  readonly code = 'reply_truncated' as const;
  readonly blame = 'user' as const;
}

/**
 * A lifecycle hook threw, did not settle within `hooks.timeoutMs`, or returned something that is
 * not a decision. The run fails closed (no call the hook was guarding is made); `hook` names it.
 *
 * @example
 * ```ts
 * try { await agent.run(task); } catch (e) { if (e instanceof HookFailedError) console.log(e.hook, e.cause); }
 * ```
 */
export class HookFailedError extends ActorloopError {
  readonly code = 'hook_failed' as const;
  readonly blame = 'user' as const;
  readonly hook: HookName;
  constructor(hook: HookName, message: string, options: ActorloopErrorOptions = {}) {
    super(message, options);
    this.hook = hook;
  }
}

/** A `beforeModelCall` hook blocked the model call; the run ends with its reason. */
export class ModelCallBlockedError extends ActorloopError {
  readonly code = 'model_call_blocked' as const;
  readonly blame = 'user' as const;
  readonly reason: string;
  constructor(reason: string, options: ActorloopErrorOptions = {}) {
    super(`The beforeModelCall hook blocked the model call: ${reason}`, options);
    this.reason = reason;
  }
}

/** A failure that was not one of actorloop's typed errors (a bug in a custom actor, say). */
export class UnexpectedRunError extends RunError {
  readonly code = 'unexpected' as const;
  readonly blame = 'runtime' as const;
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
 * const error = errorForResult(result); // e.g. MaxIterationsError, with error.result === result
 * ```
 */
export function errorForResult(result: LoopResult): RunFailure {
  const { runId, iterations } = result;
  const options = { result };
  switch (result.reason) {
    case 'max_iterations':
      return new MaxIterationsError(
        `Run ${runId} stopped after ${iterations} iterations without a final answer. Raise limits.maxIterations, simplify the task, or resume it.`,
        options,
      );
    case 'max_tokens':
      return new TokenBudgetExceededError(
        `Run ${runId} used ${result.usage.totalTokens} tokens without a final answer. Raise limits.maxTotalTokens or enable a context budget.`,
        options,
      );
    case 'timeout':
      return new RunTimeoutError(`Run ${runId} exceeded its wall-clock limit. Raise limits.timeoutMs or give tools shorter timeouts.`, options);
    case 'cancelled':
      return new RunCancelledError(`Run ${runId} was cancelled; in-flight model and tool calls were aborted.`, options);
    case 'model_behavior':
      if (result.error?.code === 'structured_output') {
        return new ModelRepairExhaustedError(
          `Run ${runId}: the model's final answer still did not match the output schema after every repair turn (limits.maxRepairTurns). Last problem: ${result.error.message} Describe the expected answer in the system prompt, simplify the schema, or use a stronger model.`,
          options,
        );
      }
      return new ModelRepairExhaustedError(
        `Run ${runId}: the model kept proposing malformed or unknown tool calls. Check the tool descriptions and schemas, or use a stronger model.`,
        options,
      );
    case 'refusal':
      return new ModelRefusedError(
        `Run ${runId}: ${result.error?.message ?? 'the model refused to answer'}. Rephrase the task or use another model.`,
        options,
      );
    case 'length':
      return new ReplyTruncatedError(
        `Run ${runId}: ${result.error?.message ?? "the model's reply was cut off at the output-token cap"}. Raise model.maxTokens, ` +
          "or set onLength: { continue: n } to let the model go on.",
        options,
      );
    case 'stuck':
      return new StuckLoopError(
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
      return new UnexpectedRunError(
        `Run ${runId} failed: ${result.error?.message ?? 'unknown error'}. This is likely a bug in a custom actor or tool wrapper.`,
        { result, cause },
      );
    }
  }
}
