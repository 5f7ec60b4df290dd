export { backoffDelay, sleep } from './backoff.ts';
export type { BackoffOptions } from './backoff.ts';
export type { RecoveryKind, RecoveryStrategy } from './recovery.ts';
export { BreakerOptions, createCircuitBreaker, SavedBreaker } from './circuitBreaker.ts';
export type { AcquireResult, BreakerClock, BreakerRuntimeOptions, CircuitBreaker, CircuitBreakerOptions } from './circuitBreaker.ts';
export { createBreakerRegistry } from './breakerRegistry.ts';
export type { BreakerRegistry } from './breakerRegistry.ts';
export { CircuitOpenError, circuitOpenMessage } from './circuitOpenError.ts';
export type { CircuitOpenDetails } from './circuitOpenError.ts';
