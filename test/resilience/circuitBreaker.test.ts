import { afterEach, describe, expect, it, vi } from 'vitest';
import { SimulatedClock, type InspectionEvent } from 'xstate';
import { ConfigurationError } from '../../src/core/errors.ts';
import { createCircuitBreaker, type CircuitBreaker, type CircuitBreakerOptions } from '../../src/resilience/circuitBreaker.ts';
import { CircuitOpenError } from '../../src/resilience/circuitOpenError.ts';

const started: CircuitBreaker[] = [];
function breaker(options: Partial<CircuitBreakerOptions> = {}): { breaker: CircuitBreaker; clock: SimulatedClock } {
  const clock = new SimulatedClock();
  const created = createCircuitBreaker({ name: 'search', clock, ...options });
  started.push(created);
  return { breaker: created, clock };
}
function fail(b: CircuitBreaker, times: number): void {
  for (let i = 0; i < times; i += 1) b.recordFailure();
}

afterEach(() => {
  for (const b of started.splice(0)) b.stop();
  vi.useRealTimers();
});

describe('circuit breaker', () => {
  it('opens after 3 consecutive failures', () => {
    const { breaker: b } = breaker();
    fail(b, 2);
    expect(b.state).toBe('closed');
    expect(b.tryAcquire()).toEqual({ admitted: true });
    b.recordFailure();
    expect(b.state).toBe('open');
  });

  it('forgets earlier failures after a success', () => {
    const { breaker: b } = breaker();
    fail(b, 2);
    b.recordSuccess();
    fail(b, 2);
    expect(b.state).toBe('closed');
    b.recordFailure();
    expect(b.state).toBe('open');
  });

  it('rejects at once while open, saying when it will probe again', () => {
    const { breaker: b, clock } = breaker();
    fail(b, 3);
    clock.increment(15_000);
    const decision = b.tryAcquire();
    expect(decision).toMatchObject({ admitted: false, state: 'open', retryAfterMs: 45_000 });
    expect(decision.admitted === false && decision.reason).toMatch(/"search" is failing repeatedly.*in 45 s/);
  });

  it('admits exactly one probe once the 60 s recovery timeout has passed', () => {
    const { breaker: b, clock } = breaker();
    fail(b, 3);
    clock.increment(59_999);
    expect(b.tryAcquire().admitted).toBe(false);
    clock.increment(1);
    expect(b.state).toBe('halfOpen');
    expect(b.tryAcquire()).toEqual({ admitted: true });
    const second = b.tryAcquire();
    expect(second).toMatchObject({ admitted: false, state: 'halfOpen' });
    expect(second).not.toHaveProperty('retryAfterMs');
  });

  it('closes when the probe succeeds', () => {
    const { breaker: b, clock } = breaker();
    fail(b, 3);
    clock.increment(60_000);
    expect(b.tryAcquire().admitted).toBe(true);
    b.recordSuccess();
    expect(b.state).toBe('closed');
    expect(b.actor.getSnapshot().context).toMatchObject({ consecutiveFailures: 0, probesInFlight: 0, openedAt: null });
    // A fresh run of failures is needed to open it again.
    fail(b, 2);
    expect(b.state).toBe('closed');
  });

  it('re-opens for a full recovery timeout when the probe fails', () => {
    const { breaker: b, clock } = breaker();
    fail(b, 3);
    clock.increment(60_000);
    expect(b.tryAcquire().admitted).toBe(true);
    clock.increment(2_000);
    b.recordFailure();
    expect(b.state).toBe('open');
    expect(b.tryAcquire()).toMatchObject({ admitted: false, retryAfterMs: 60_000 });
    clock.increment(60_000);
    expect(b.state).toBe('halfOpen');
  });

  it('honours custom thresholds and probe counts', () => {
    const { breaker: b, clock } = breaker({ failureThreshold: 1, recoveryTimeoutMs: 10, halfOpenMaxCalls: 2 });
    b.recordFailure();
    expect(b.state).toBe('open');
    clock.increment(10);
    expect([b.tryAcquire().admitted, b.tryAcquire().admitted, b.tryAcquire().admitted]).toEqual([true, true, false]);
  });

  it('closes and forgets failures on reset', () => {
    const { breaker: b } = breaker();
    fail(b, 3);
    b.reset();
    expect(b.state).toBe('closed');
    fail(b, 2);
    expect(b.state).toBe('closed');
  });

  it('reuses one frozen result for admitted calls', () => {
    const { breaker: b } = breaker();
    const first = b.tryAcquire();
    expect(b.tryAcquire()).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });

  it('runs the recovery timer on real time by default', () => {
    vi.useFakeTimers();
    const b = createCircuitBreaker({ name: 'search', failureThreshold: 1, recoveryTimeoutMs: 1_000 });
    started.push(b);
    b.recordFailure();
    expect(b.tryAcquire()).toMatchObject({ admitted: false, retryAfterMs: 1_000 });
    vi.advanceTimersByTime(1_000);
    expect(b.state).toBe('halfOpen');
  });

  it('reports its transitions to an inspector', () => {
    const seen: string[] = [];
    const inspect = (event: InspectionEvent) => {
      if (event.type === '@xstate.event') seen.push(event.event.type);
    };
    const { breaker: b } = breaker({ failureThreshold: 1, inspect });
    b.recordFailure();
    expect(seen).toContain('breaker.failure');
  });

  it('admits every call and records nothing once stopped', () => {
    const { breaker: b } = breaker({ failureThreshold: 1 });
    b.recordFailure();
    b.stop();
    expect(b.tryAcquire()).toEqual({ admitted: true });
    expect(() => b.recordFailure()).not.toThrow();
    expect(b.actor.getSnapshot().status).toBe('stopped');
  });

  it('refuses invalid options with a ConfigurationError that says what is allowed', () => {
    expect(() => createCircuitBreaker({ name: 'x', failureThreshold: 0 })).toThrow(ConfigurationError);
    expect(() => createCircuitBreaker({ name: 'x', halfOpenMaxCalls: 1.5 })).toThrow(/halfOpenMaxCalls ≥ 1/);
    expect(() => createCircuitBreaker({ name: 'x', recoveryTimeoutMs: -1 })).toThrow(/recoveryTimeoutMs ≥ 0/);
  });
});

describe('CircuitOpenError', () => {
  it('is a tool-blamed circuit_open error naming the tool and when it will be probed', () => {
    const { breaker: b } = breaker();
    fail(b, 3);
    const decision = b.tryAcquire();
    if (decision.admitted) throw new Error('expected a refusal');
    const error = new CircuitOpenError({ tool: b.name, ...decision });
    expect(error).toMatchObject({ name: 'CircuitOpenError', code: 'circuit_open', blame: 'tool', tool: 'search', retryAfterMs: 60_000 });
    expect(error.message).toBe(decision.reason);
    expect(error.message).toMatch(/failing repeatedly.*probed again in 60 s.*Use another tool/);
    expect(error.toJSON()).toEqual({ name: 'CircuitOpenError', code: 'circuit_open', blame: 'tool', message: error.message });
  });
});
