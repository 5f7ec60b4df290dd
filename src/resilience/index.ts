/**
 * Resilience: circuit breakers, backoff, and the recovery strategy types.
 *
 * @example
 * ```ts
 * import { createBreakerRegistry, CircuitOpenError } from './resilience/index.ts';
 * const breakers = createBreakerRegistry();
 * const decision = breakers.get('search').tryAcquire();
 * if (!decision.admitted) throw new CircuitOpenError({ tool: 'search', ...decision });
 * ```
 */
export { backoffDelay, sleep } from './backoff.ts';
export type { BackoffOptions } from './backoff.ts';
export type { RecoveryKind, RecoveryStrategy } from './recovery.ts';
// Circuit breakers
export { BreakerOptions, createCircuitBreaker, SavedBreaker } from './circuitBreaker.ts';
export type { AcquireResult, BreakerClock, BreakerRuntimeOptions, CircuitBreaker, CircuitBreakerOptions } from './circuitBreaker.ts';
export { createBreakerRegistry } from './breakerRegistry.ts';
export type { BreakerRegistry } from './breakerRegistry.ts';
export { CircuitOpenError, circuitOpenMessage } from './circuitOpenError.ts';
export type { CircuitOpenDetails } from './circuitOpenError.ts';
