import type { ActCall, ToolOutcome } from '../core/run.ts';
import type { ImagePart } from '../core/messages.ts';
import { DEFAULTS } from '../core/defaults.ts';
import { describeError } from '../core/errors.ts';
import type { LoopEvent, ToolOutcomeStatus } from '../core/loopEvent.ts';
import type { BreakerRegistry } from '../resilience/breakerRegistry.ts';
import type { CircuitBreaker, SavedBreaker } from '../resilience/circuitBreaker.ts';
import { backoffDelay, sleep } from '../resilience/backoff.ts';
import type { RecoveryStrategy } from '../resilience/recovery.ts';
import { formatToolError, serializeToolResult } from '../tools/result.ts';
import { fenceUntrusted } from '../policy/taint.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { Tool } from '../tools/types.ts';
import { callKey, type CallKey } from './callKey.ts';
import { DeadLetterQueue, ResultCache } from './memory.ts';
import { mapBounded } from './pool.ts';
import { runWithTimeout } from './timeout.ts';
import { type Cancellation } from '../core/run.ts';
import type { SessionMemory } from '../core/sessionMemory.ts';

export interface ExecutorOptions {
  readonly tools: ToolRegistry;
  readonly breakers?: BreakerRegistry;
  readonly maxConcurrency?: number;
  readonly timeoutMs?: number;
  readonly maxResultBytes?: number;
  readonly recovery?: RecoveryStrategy;
  readonly cache?: ResultCache;
  readonly deadLetters?: DeadLetterQueue;
  readonly now?: () => number;
  /** Secret redaction, applied before anyone sees the text. */
  readonly redact?: (text: string) => string;
  /** Keeps the bytes of images tools attach before the outcome is recorded; `unsent` says why each left out was. */
  readonly storeImages?: (images: readonly ImagePart[]) => { readonly parts: ImagePart[]; readonly unsent: readonly string[] };
}

export interface ExecutionScope {
  readonly runId: string;
  readonly agentId: string;
  readonly iteration: number;
  readonly signal: Cancellation;
  emit(event: LoopEvent): void;
  readonly journal?: CallJournal;
  /**
   * Replaces a fresh outcome before it is recorded, so a resumed run gets the reviewed outcome
   * without reviewing again. A rejection fails the act phase.
   */
  readonly review?: (outcome: ToolOutcome, call: ActCall) => Promise<ToolOutcome>;
  readonly session?: SessionMemory;
}

/**
 * `before` may answer a call without running it (recorded outcome, or an escalation for a
 * non-idempotent call that may have taken effect); else it durably records the call or throws.
 */
export interface CallJournal {
  before(call: ActCall, tool: Tool, key: CallKey): ToolOutcome | undefined;
  after(call: ActCall, outcome: ToolOutcome, key: CallKey): void;
  breaker?(saved: SavedBreaker): void;
}

type Attempt =
  | { readonly ok: true; readonly value: unknown; readonly images?: readonly ImagePart[] }
  | { readonly ok: false; readonly status: 'error' | 'timeout' | 'circuit_open'; readonly message: string };

const ASK_MODEL: RecoveryStrategy = { kind: 'askModel' };

export function createExecutor(options: ExecutorOptions) {
  const maxConcurrency = options.maxConcurrency ?? DEFAULTS.tools.maxConcurrency;
  const defaultTimeoutMs = options.timeoutMs ?? DEFAULTS.tools.timeoutMs;
  const maxResultBytes = options.maxResultBytes ?? DEFAULTS.tools.maxResultBytes;
  const defaultRecovery = options.recovery ?? ASK_MODEL;
  const cache = options.cache ?? new ResultCache();
  const deadLetters = options.deadLetters ?? new DeadLetterQueue();
  const now = options.now ?? Date.now;
  const redact = options.redact;

  async function attemptOnce(tool: Tool, call: ActCall, scope: ExecutionScope, attempt: number, key: () => CallKey): Promise<Attempt> {
    const breaker = options.breakers?.get(tool.name);
    const probe = breaker?.state === 'halfOpen';
    if (breaker !== undefined) {
      const admission = breaker.tryAcquire();
      if (!admission.admitted) return { ok: false, status: 'circuit_open', message: admission.reason };
    }
    scope.emit({ type: 'tool.started', toolCallId: call.call.id, tool: tool.name, attempt });
    let images: ImagePart[] | undefined;
    const attach = options.storeImages === undefined ? undefined : (more: readonly ImagePart[]) => void (images ??= []).push(...more);
    const result = await runWithTimeout(
      (signal) =>
        tool.execute(call.arguments as never, {
          // A getter: most tools never read their signal.
          get signal() {
            return signal();
          },
          toolCallId: call.call.id,
          get idempotencyKey() {
            return key().key;
          },
          runId: scope.runId,
          agentId: scope.agentId,
          ...(scope.session === undefined ? {} : { session: scope.session }),
          ...(attach === undefined ? {} : { attachImages: attach }),
        }),
      tool.timeoutMs ?? defaultTimeoutMs,
      scope.signal,
    );
    if (result.ok) {
      if (breaker !== undefined) settle(breaker, scope, true);
      return images === undefined ? { ok: true, value: result.value } : { ok: true, value: result.value, images };
    }
    // A cancelled run is not the tool's failure, but a half-open probe must still end or its slot
    // stays taken; an unfinished probe proved nothing, so the breaker re-opens.
    if (scope.signal.aborted) {
      if (probe && breaker !== undefined) settle(breaker, scope, false);
      throw scope.signal.reason;
    }
    if (breaker !== undefined) settle(breaker, scope, false);
    if (result.timedOut) {
      return { ok: false, status: 'timeout', message: `Tool "${tool.name}" timed out after ${tool.timeoutMs ?? defaultTimeoutMs} ms.` };
    }
    return { ok: false, status: 'error', message: formatToolError(result.error) };
  }

  function settle(breaker: CircuitBreaker, scope: ExecutionScope, ok: boolean): void {
    const before = breaker.revision;
    if (ok) breaker.recordSuccess();
    else breaker.recordFailure();
    if (breaker.revision === before || scope.journal?.breaker === undefined) return;
    const saved = breaker.saved();
    if (saved !== undefined) scope.journal.breaker(saved);
  }

  function outcome(call: ActCall, status: ToolOutcomeStatus, content: string, isError: boolean): ToolOutcome {
    const clean = redact === undefined ? content : redact(content);
    return { toolCallId: call.call.id, tool: call.call.name, status, content: clean, isError };
  }

  function seal(result: ToolOutcome): ToolOutcome {
    if (options.tools.get(result.tool)?.untrusted !== true) return result;
    return { ...result, content: fenceUntrusted(result.content, result.tool), untrusted: result.tool };
  }

  /** What the review wrote is redacted like what the tool wrote. */
  async function reviewed(result: ToolOutcome, call: ActCall, scope: ExecutionScope): Promise<ToolOutcome> {
    if (scope.review === undefined) return result;
    const next = await scope.review(result, call);
    if (next === result || redact === undefined) return next;
    const content = redact(next.content);
    return content === next.content ? next : { ...next, content };
  }

  function success(call: ActCall, value: unknown, status: ToolOutcomeStatus, prefix = '', images?: readonly ImagePart[]): ToolOutcome {
    const serialized = serializeToolResult(value, maxResultBytes);
    const result = outcome(call, status, prefix + serialized.content, false);
    if (images === undefined || images.length === 0 || options.storeImages === undefined) return result;
    const stored = options.storeImages(images);
    // The model is told what it will not see, or it takes the tool to have shown it.
    const content = stored.unsent.length === 0 ? result.content : [result.content, ...stored.unsent.map((why) => `[${why}]`)].filter((line) => line !== '').join('\n');
    return stored.parts.length === 0 ? { ...result, content } : { ...result, content, parts: stored.parts };
  }

  async function runOne(call: ActCall, scope: ExecutionScope): Promise<ToolOutcome> {
    const started = now();
    const tool = options.tools.get(call.call.name);
    if (tool === undefined) return outcome(call, 'error', `Tool "${call.call.name}" is not available.`, true);
    let made: CallKey | undefined;
    const key = (): CallKey => (made ??= callKey(scope.runId, scope.iteration, call.index, tool.name, call.arguments));
    if (scope.journal !== undefined) {
      let replayed: ToolOutcome | undefined;
      try {
        replayed = scope.journal.before(call, tool, key());
      } catch (error) {
        // Unrecorded, a call that takes effect and is interrupted would be made again blindly.
        return seal(outcome(call, 'error', `The call was not made: recording it durably failed (${describeError(error)}).`, true));
      }
      if (replayed !== undefined) return replayed;
    }
    const strategy = tool.recovery ?? defaultRecovery;
    const cacheKey = strategy.kind === 'cached' ? ResultCache.key(tool.name, call.arguments) : undefined;

    let attempt = 0;
    let result: ToolOutcome;
    for (;;) {
      attempt++;
      const attempted = await attemptOnce(tool, call, scope, attempt, key);
      if (attempted.ok) {
        result = success(call, attempted.value, 'ok', '', attempted.images);
        if (cacheKey !== undefined) cache.set(cacheKey, result.content, now());
        break;
      }
      const recovered = await recover(call, scope, strategy, attempted, attempt, cacheKey, key);
      if (recovered === 'retry') continue;
      result = recovered;
      break;
    }
    scope.emit({
      type: 'tool.finished',
      toolCallId: call.call.id,
      tool: tool.name,
      status: result.status,
      durationMs: now() - started,
    });
    result = seal(await reviewed(result, call, scope));
    // Escalations too: after a human's approval the call is made again, a second attempt of its key.
    scope.journal?.after(call, result, key());
    return result;
  }

  async function recover(
    call: ActCall,
    scope: ExecutionScope,
    chosen: RecoveryStrategy,
    failure: Extract<Attempt, { ok: false }>,
    attemptNo: number,
    cacheKey: string | undefined,
    key: () => CallKey,
  ): Promise<ToolOutcome | 'retry'> {
    const asObservation = () => outcome(call, failure.status, failure.message, true);
    const announce = (strategyKind: RecoveryStrategy['kind']) =>
      scope.emit({
        type: 'recovery.triggered',
        toolCallId: call.call.id,
        tool: call.call.name,
        strategy: strategyKind,
        attempt: attemptNo,
        error: failure.message,
      });
    switch (chosen.kind) {
      case 'retry': {
        if (attemptNo >= chosen.maxAttempts) {
          return outcome(call, failure.status, `${failure.message} (gave up after ${attemptNo} attempts)`, true);
        }
        announce('retry');
        await sleep(backoffDelay(attemptNo, { baseDelayMs: chosen.baseDelayMs, maxDelayMs: chosen.maxDelayMs }), scope.signal);
        return 'retry';
      }
      case 'fallback': {
        announce('fallback');
        const fallback = options.tools.get(chosen.tool);
        const parsed = fallback?.input.safeParse(call.arguments);
        if (fallback === undefined || parsed === undefined || !parsed.success) {
          return outcome(call, failure.status, `${failure.message} (fallback tool "${chosen.tool}" could not take these arguments)`, true);
        }
        const second = await attemptOnce(fallback, { ...call, arguments: parsed.data }, scope, attemptNo + 1, key);
        if (second.ok) return success(call, second.value, 'fallback', `(answered by fallback tool "${fallback.name}") `);
        return outcome(call, second.status, `${failure.message}; fallback "${fallback.name}" failed too: ${second.message}`, true);
      }
      case 'cached': {
        announce('cached');
        const hit = cacheKey === undefined ? undefined : cache.get(cacheKey, now(), chosen.maxAgeMs);
        if (hit === undefined) return outcome(call, failure.status, `${failure.message} (no cached result to fall back on)`, true);
        const ageS = Math.round((now() - hit.at) / 1000);
        return outcome(call, 'cached', `(cached result from ${ageS} s ago; the live call failed) ${hit.content}`, false);
      }
      case 'escalate':
        announce('escalate');
        return outcome(call, 'escalate', failure.message, true);
      case 'deadLetter':
        announce('deadLetter');
        deadLetters.add({
          runId: scope.runId,
          agentId: scope.agentId,
          toolCallId: call.call.id,
          tool: call.call.name,
          arguments: call.arguments,
          error: failure.message,
          at: now(),
        });
        return outcome(call, 'dead_letter', `${failure.message} The failure was recorded for later handling; continue without this result.`, true);
      case 'askModel':
        announce('askModel');
        return asObservation();
    }
  }

  return {
    cache,
    deadLetters,
    /** Rejects only when the run is aborted or a review fails. */
    run(calls: readonly ActCall[], scope: ExecutionScope): Promise<ToolOutcome[]> {
      return mapBounded(calls, maxConcurrency, (call) => runOne(call, scope));
    },
  };
}

export type Executor = ReturnType<typeof createExecutor>;
