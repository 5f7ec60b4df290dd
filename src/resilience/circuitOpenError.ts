/**
 * The error an open (or saturated half-open) circuit breaker turns a tool call into. The
 * executor gives its message to the model as the observation, so it says what is going on and
 * what to do instead.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';

export interface CircuitOpenDetails {
  /** The tool whose breaker refused the call. */
  readonly tool: string;
  /** `open`: failing, waiting out the recovery timeout; `halfOpen`: a probe call is already running. */
  readonly state: 'open' | 'halfOpen';
  /** Time until the breaker admits a probe call, in ms (known only while open). */
  readonly retryAfterMs?: number;
}

/**
 * A call refused by a circuit breaker without running the tool.
 *
 * @example
 * ```ts
 * const decision = breaker.tryAcquire();
 * if (!decision.admitted) throw new CircuitOpenError({ tool: 'search', ...decision });
 * // Tool "search" is failing repeatedly, so its circuit breaker is open: the call was not made.
 * // It will be probed again in 60 s. Use another tool or continue without it until then.
 * ```
 */
export class CircuitOpenError extends ActorloopError {
  declare readonly code: 'circuit_open';
  readonly tool: string;
  readonly state: 'open' | 'halfOpen';
  readonly retryAfterMs: number | undefined;

  constructor(details: CircuitOpenDetails, options: ActorloopErrorOptions = {}) {
    super('circuit_open', circuitOpenMessage(details), options);
    this.tool = details.tool;
    this.state = details.state;
    this.retryAfterMs = details.retryAfterMs;
  }
}

/**
 * The sentence a refused call reports, shared by {@link CircuitOpenError} and the breaker's
 * `tryAcquire` refusal so the model always reads the same wording.
 *
 * @example
 * ```ts
 * circuitOpenMessage({ tool: 'search', state: 'open', retryAfterMs: 1500 });
 * // 'Tool "search" is failing repeatedly, so its circuit breaker is open: ... probed again in 2 s. ...'
 * ```
 */
export function circuitOpenMessage(details: CircuitOpenDetails): string {
  const tool = JSON.stringify(details.tool);
  if (details.state === 'halfOpen') {
    return (
      `Tool ${tool} has been failing repeatedly and is being probed with a test call right now, ` +
      'so this call was not made. Use another tool or continue without it; it will accept calls again once the probe succeeds.'
    );
  }
  const when =
    details.retryAfterMs === undefined ? 'after its recovery timeout' : `in ${Math.ceil(details.retryAfterMs / 1000)} s`;
  return (
    `Tool ${tool} is failing repeatedly, so its circuit breaker is open: the call was not made. ` +
    `It will be probed again ${when}. Use another tool or continue without it until then.`
  );
}
