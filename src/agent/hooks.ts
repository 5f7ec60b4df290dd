/** A hook that throws, hangs or answers nonsense fails the run closed with `HookError` (`hook_failed`). */
import { z } from 'zod';
import { describeError } from '../core/errors.ts';
import { Message } from '../core/messages.ts';
import type { HookName, LoopEventOf } from '../core/loopEvent.ts';
import type {
  AgentHooks,
  HookContext,
  ModelCallDecision,
  PreparerContext,
  ModelReply,
  ModelRequest,
  ToolCallDecision,
  ToolCallProposal,
  ToolCallResult,
  ToolResultDecision,
  Turn,
} from '../core/hooks.ts';
import { HookError } from './errors.ts';

const DEFAULT_TIMEOUT_MS = 10_000;

export type HookScope = PreparerContext;

type Decision = LoopEventOf<'hook.completed'>['decision'];

const ToolSpecShape = z.object({ name: z.string(), description: z.string(), parameters: z.record(z.string(), z.unknown()) });

const ModelCallAnswer = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('modify'),
    request: z
      .object({
        messages: z.array(Message).optional(),
        tools: z.array(ToolSpecShape).optional(),
        model: z.string().optional(),
        temperature: z.number().optional(),
        maxTokens: z.number().int().positive().optional(),
      })
      .strict(),
    reason: z.string().optional(),
  }),
  z.object({ kind: z.literal('block'), reason: z.string() }),
]);

const ToolCallAnswer = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('approve'), reason: z.string().optional() }),
  z.object({ kind: z.literal('deny'), reason: z.string() }),
  z.object({ kind: z.literal('modify'), arguments: z.unknown(), reason: z.string().optional() }),
]);

const ToolResultAnswer = z.object({ kind: z.literal('rewrite'), content: z.string(), reason: z.string().optional() });

/** Only what says "go on unchanged"; anything else is a decision to check. */
const nothing = (value: unknown): value is undefined => value === undefined;

/** Methods exist only for the hooks given: callers skip a hook nobody set by checking for it. */
export interface HookRunner {
  readonly beforeModelCall?: (request: ModelRequest, scope: HookScope) => Promise<ModelCallDecision | undefined>;
  readonly afterModelCall?: (reply: ModelReply, scope: HookScope) => Promise<void>;
  readonly beforeToolCall?: (call: ToolCallProposal, scope: HookScope) => Promise<ToolCallDecision | undefined>;
  readonly afterToolCall?: (result: ToolCallResult, scope: HookScope) => Promise<ToolResultDecision | undefined>;
  readonly onTurnStart?: (turn: Turn, scope: HookScope) => Promise<void>;
  readonly onTurnEnd?: (turn: Turn, scope: HookScope) => Promise<void>;
  /** Never rejects: the run is already failing with the error it reports. */
  readonly onError?: (error: unknown, scope: HookScope) => Promise<void>;
}

export function createHookRunner(hooks: AgentHooks | undefined, clean: <T>(value: T) => T = (value) => value): HookRunner | undefined {
  if (hooks === undefined) return undefined;
  const timeoutMs = hooks.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const run = <T>(name: HookName, scope: HookScope, invoke: () => unknown, read: (answer: unknown) => { value: T; decision: Decision; reason?: string }, toolCallId?: string) =>
    runHook(name, scope, timeoutMs, invoke, read, toolCallId);
  const observed = (answer: unknown): { value: undefined; decision: Decision } => {
    if (!nothing(answer)) throw new TypeError(`it returned ${describeError(answer)}, but this hook only observes: return nothing.`);
    return { value: undefined, decision: 'continue' };
  };
  const runner: { -readonly [K in keyof HookRunner]: HookRunner[K] } = {};
  const { beforeModelCall, afterModelCall, beforeToolCall, afterToolCall, onTurnStart, onTurnEnd, onError } = hooks;
  if (beforeModelCall !== undefined) {
    runner.beforeModelCall = (request, scope) =>
      run('beforeModelCall', scope, () => beforeModelCall.call(hooks, request, contextOf(scope)), (answer) => {
        if (nothing(answer)) return { value: undefined, decision: 'continue' };
        // What a hook adds to the request is scrubbed like everything else the model is sent.
        const value = clean(checked(ModelCallAnswer, answer) as ModelCallDecision);
        return { value, decision: value.kind, ...(value.reason === undefined ? {} : { reason: value.reason }) };
      });
  }
  if (afterModelCall !== undefined) {
    runner.afterModelCall = (reply, scope) => run('afterModelCall', scope, () => afterModelCall.call(hooks, reply, contextOf(scope)), observed);
  }
  if (beforeToolCall !== undefined) {
    runner.beforeToolCall = (call, scope) =>
      run(
        'beforeToolCall',
        scope,
        () => beforeToolCall.call(hooks, call, contextOf(scope)),
        (answer) => {
          if (nothing(answer)) return { value: undefined, decision: 'continue' };
          const value = checked(ToolCallAnswer, answer) as ToolCallDecision;
          return { value, decision: value.kind, ...(value.reason === undefined ? {} : { reason: value.reason }) };
        },
        call.toolCallId,
      );
  }
  if (afterToolCall !== undefined) {
    runner.afterToolCall = (result, scope) =>
      run(
        'afterToolCall',
        scope,
        () => afterToolCall.call(hooks, result, contextOf(scope)),
        (answer) => {
          if (nothing(answer)) return { value: undefined, decision: 'continue' };
          const value = checked(ToolResultAnswer, answer);
          return { value, decision: 'rewrite', ...(value.reason === undefined ? {} : { reason: value.reason }) };
        },
        result.toolCallId,
      );
  }
  if (onTurnStart !== undefined) runner.onTurnStart = (turn, scope) => run('onTurnStart', scope, () => onTurnStart.call(hooks, turn, contextOf(scope)), observed);
  if (onTurnEnd !== undefined) runner.onTurnEnd = (turn, scope) => run('onTurnEnd', scope, () => onTurnEnd.call(hooks, turn, contextOf(scope)), observed);
  if (onError !== undefined) {
    // Its own failure is journalled (as `failed`) and dropped: the run keeps the error it failed with.
    runner.onError = (error, scope) => run('onError', scope, () => onError.call(hooks, error, contextOf(scope)), observed).catch(() => undefined);
  }
  return runner;
}

function contextOf(scope: HookScope): HookContext {
  return { runId: scope.runId, agentId: scope.agentId, iteration: scope.iteration, signal: scope.signal };
}

function checked<S extends z.ZodType>(schema: S, answer: unknown): z.infer<S> {
  const parsed = schema.safeParse(answer);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? '' : ` at ${issue.path.join('.')}`;
  throw new TypeError(`it returned ${describeError(answer).slice(0, 200)}, which is not a decision (${issue?.message ?? 'invalid'}${where}).`);
}

async function runHook<T>(
  name: HookName,
  scope: HookScope,
  timeoutMs: number,
  invoke: () => unknown,
  read: (answer: unknown) => { value: T; decision: Decision; reason?: string },
  toolCallId: string | undefined,
): Promise<T> {
  const started = performance.now();
  const done = (decision: Decision, reason?: string): void =>
    scope.emit({
      type: 'hook.completed',
      hook: name,
      decision,
      durationMs: performance.now() - started,
      ...(toolCallId === undefined ? {} : { toolCallId }),
      ...(reason === undefined ? {} : { reason }),
    });
  let answer: unknown;
  try {
    answer = invoke();
    // A sync hook's answer is used as it is: no timer, no extra turn of the event loop.
    if (isThenable(answer)) answer = await settleWithin(answer, timeoutMs, scope.signal, name);
  } catch (error) {
    if (scope.signal.aborted && error === scope.signal.reason) throw error;
    if (error instanceof HookError && error.code === 'hook_failed') error.runId ??= scope.runId;
    const failure =
      (error instanceof HookError && error.code === 'hook_failed') ? error : HookError.failed(name, `The ${name} hook threw: ${describeError(error)} The run fails closed; fix the hook or catch inside it.`, { cause: error, runId: scope.runId });
    done('failed', failure.message);
    throw failure;
  }
  let outcome: { value: T; decision: Decision; reason?: string };
  try {
    outcome = read(answer);
  } catch (error) {
    const failure = HookError.failed(name, `The ${name} hook answered wrongly: ${describeError(error)}`, { cause: error, runId: scope.runId });
    done('failed', failure.message);
    throw failure;
  }
  done(outcome.decision, outcome.reason);
  return outcome.value;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function';
}

/** The hook's promise, or a `HookError` (`hook_failed`) once `timeoutMs` passes, or the run's abort reason. */
function settleWithin(answer: PromiseLike<unknown>, timeoutMs: number, signal: AbortSignal, name: HookName): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(HookError.failed(name, `The ${name} hook did not settle within ${timeoutMs} ms. Make it faster, or raise hooks.timeoutMs.`));
    }, timeoutMs);
    const onAbort = (): void => {
      cleanup();
      reject(signal.reason);
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    answer.then(
      (value) => {
        cleanup();
        resolve(value);
      },
      (error: unknown) => {
        cleanup();
        reject(error);
      },
    );
  });
}
