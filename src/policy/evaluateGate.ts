/** Gates fail closed: a broken policy must never let an action through, nor crash the loop. */
import { ActorloopError, describeError, type ActorloopErrorOptions } from '../core/errors.ts';
import { toGateDecision } from './decision.ts';
import type { GateContext, GateDecision, PolicyGate, ProposedAction } from './types.ts';

/**
 * A gate misbehaved; the call it was judging was denied. Passed to `onGateError`, never thrown.
 *
 * @example
 * ```ts
 * await evaluateGate(gate, action, context, { onGateError: (e) => console.warn(e.gate, e.failure, e.message) });
 * ```
 */
export class PolicyGateError extends ActorloopError {
  declare readonly code: 'policy_gate_failed';
  readonly gate: string;
  readonly failure: 'threw' | 'rejected' | 'invalid_decision' | 'timed_out';

  constructor(gate: string, failure: PolicyGateError['failure'], options: ActorloopErrorOptions & { readonly timeoutMs?: number } = {}) {
    const what =
      failure === 'invalid_decision'
        ? 'returned something that is not a GateDecision ({ kind: "allow" } | { kind: "deny", reason } | { kind: "modify", arguments, reason } | { kind: "confirm", reason })'
        : failure === 'timed_out'
          ? `did not decide within ${options.timeoutMs ?? '?'} ms (a gate that needs a human returns { kind: "confirm" } instead of waiting)`
          : `${failure === 'threw' ? 'threw' : 'rejected'}: ${describeError(options.cause)}`;
    const fix = failure === 'timed_out' ? 'make the gate answer sooner, or raise policy.gateTimeoutMs' : 'fix the gate';
    super('policy_gate_failed', `Policy gate ${JSON.stringify(gate)} ${what}. The call was denied (gates fail closed); ${fix}.`, options);
    this.gate = gate;
    this.failure = failure;
  }
}

export interface EvaluateGateOptions {
  /** Told about every gate failure, e.g. to journal it. The model only sees a generic reason. */
  readonly onGateError?: (error: PolicyGateError) => void;
  /** A gate whose promise has not settled by then denies the call; its late answer is ignored. Default: no bound. */
  readonly timeoutMs?: number;
}

/** Never rejects. The denial reason names the gate but not the error (it may hold internals); the error goes to `onGateError`. */
export function evaluateGate(
  gate: PolicyGate,
  action: ProposedAction,
  context: GateContext,
  options: EvaluateGateOptions = {},
): Promise<GateDecision> {
  return Promise.resolve(runGate(gate, action, context, options));
}

/** Answers synchronously when the gate does, so chains of synchronous gates need no promise per call. Never throws. */
export function runGate(
  gate: PolicyGate,
  action: ProposedAction,
  context: GateContext,
  options: EvaluateGateOptions = {},
): GateDecision | Promise<GateDecision> {
  let result: unknown;
  try {
    result = gate.evaluate(action, context);
    if (isThenable(result)) {
      const settled = Promise.resolve(result).then(
        (value) => validated(gate, action.tool, value, options),
        (error: unknown) => failClosed(gate, action.tool, 'rejected', error, options),
      );
      return options.timeoutMs === undefined ? settled : within(settled, gate, action.tool, options, options.timeoutMs);
    }
  } catch (error) {
    return failClosed(gate, action.tool, 'threw', error, options);
  }
  return validated(gate, action.tool, result, options);
}

/** The gate's decision, or a denial once `timeoutMs` passes without one. */
function within(settled: Promise<GateDecision>, gate: PolicyGate, tool: string, options: EvaluateGateOptions, timeoutMs: number): Promise<GateDecision> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<GateDecision>((resolve) => {
    timer = setTimeout(() => resolve(failClosed(gate, tool, 'timed_out', undefined, options, timeoutMs)), timeoutMs);
  });
  return Promise.race([settled, late]).finally(() => clearTimeout(timer));
}

function validated(gate: PolicyGate, tool: string, value: unknown, options: EvaluateGateOptions): GateDecision {
  return toGateDecision(value) ?? failClosed(gate, tool, 'invalid_decision', undefined, options);
}

function failClosed(
  gate: PolicyGate,
  tool: string,
  failure: PolicyGateError['failure'],
  cause: unknown,
  options: EvaluateGateOptions,
  timeoutMs?: number,
): GateDecision {
  const name = gateName(gate);
  try {
    options.onGateError?.(new PolicyGateError(name, failure, { cause, ...(timeoutMs === undefined ? {} : { timeoutMs }) }));
  } catch {
    // A throwing observer must not turn a denial into a crash.
  }
  const what = failure === 'invalid_decision' ? 'returned an invalid decision' : failure === 'timed_out' ? 'did not answer in time' : 'failed';
  return {
    kind: 'deny',
    reason:
      `The call to tool ${JSON.stringify(tool)} was denied because policy gate ${JSON.stringify(name)} ${what} ` +
      '(gates fail closed). Do not retry it; continue without this call.',
  };
}

function gateName(gate: unknown): string {
  try {
    const name: unknown = (gate as { name?: unknown } | null)?.name;
    return typeof name === 'string' && name !== '' ? name : 'unnamed gate';
  } catch {
    return 'unnamed gate';
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
