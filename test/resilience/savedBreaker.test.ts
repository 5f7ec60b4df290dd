import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { createBreakerRegistry } from '../../src/resilience/breakerRegistry.ts';
import { createCircuitBreaker, SavedBreaker } from '../../src/resilience/circuitBreaker.ts';

const RECOVERY = 600_000;

/** A breaker on a simulated clock started at `start` ms. */
function breakerAt(start: number) {
  const clock = new SimulatedClock();
  clock.set(start);
  const breaker = createCircuitBreaker({ name: 'search', failureThreshold: 2, recoveryTimeoutMs: RECOVERY, clock });
  return { clock, breaker };
}

describe('saving and restoring a circuit breaker', () => {
  it('saves nothing until the state changes, then the open state with when it opened', () => {
    const { clock, breaker } = breakerAt(1_000);
    breaker.recordFailure();
    expect(breaker.saved()).toBeUndefined();
    clock.increment(500);
    breaker.recordFailure();
    expect(breaker.saved()).toEqual({ tool: 'search', state: 'open', failures: 2, openedAt: 1_500, at: 1_500 });
    expect(SavedBreaker.safeParse(breaker.saved()).success).toBe(true);
  });

  it('restores an open state for the rest of its recovery window, then probes', () => {
    const { clock, breaker } = breakerAt(10_000);
    // Opened 1000 ms before this breaker's clock: 599 000 ms of the window are left.
    expect(breaker.restore({ tool: 'search', state: 'open', failures: 2, openedAt: 9_000, at: 9_000 })).toBe(true);
    expect(breaker.tryAcquire()).toMatchObject({ admitted: false, state: 'open', retryAfterMs: RECOVERY - 1_000 });
    clock.increment(RECOVERY - 1_001);
    expect(breaker.state).toBe('open');
    clock.increment(1);
    expect(breaker.state).toBe('halfOpen');
    expect(breaker.tryAcquire().admitted).toBe(true);
  });

  it('restores an open state whose window has passed as half-open: the next call is a probe', () => {
    const { breaker } = breakerAt(RECOVERY + 5_000);
    breaker.restore({ tool: 'search', state: 'open', failures: 2, openedAt: 4_000, at: 4_000 });
    expect(breaker.state).toBe('halfOpen');
    expect(breaker.tryAcquire().admitted).toBe(true);
  });

  it('keeps a newer state: an older saved state does not overwrite it', () => {
    const { clock, breaker } = breakerAt(1_000);
    breaker.recordFailure();
    breaker.recordFailure(); // open at 1000
    clock.increment(RECOVERY);
    expect(breaker.state).toBe('halfOpen');
    breaker.tryAcquire();
    breaker.recordSuccess(); // closed at 601 000
    const closed = breaker.saved();
    expect(closed).toMatchObject({ state: 'closed', at: 1_000 + RECOVERY });

    // A log written before the breaker closed again says it is open: ignored.
    expect(breaker.restore({ tool: 'search', state: 'open', failures: 2, openedAt: 1_000, at: 1_000 })).toBe(false);
    expect(breaker.state).toBe('closed');
    expect(breaker.tryAcquire().admitted).toBe(true);
    // The same state again is not newer either.
    expect(breaker.restore({ tool: 'search', state: 'open', failures: 2, openedAt: 1_000, at: closed?.at ?? 0 })).toBe(false);
    expect(breaker.state).toBe('closed');
    // A later one is taken.
    expect(breaker.restore({ tool: 'search', state: 'open', failures: 2, openedAt: 2_000 + RECOVERY, at: 2_000 + RECOVERY })).toBe(true);
    expect(breaker.state).toBe('open');
  });

  it('a registry restores each tool from its latest saved state and keeps the newer one it holds', () => {
    const clock = new SimulatedClock();
    clock.set(50_000);
    const registry = createBreakerRegistry({ failureThreshold: 2, recoveryTimeoutMs: RECOVERY }, {}, { clock });
    registry.get('a').recordFailure();
    registry.get('a').recordFailure(); // open at 50 000
    registry.restore([
      { tool: 'a', state: 'closed', failures: 0, openedAt: null, at: 40_000 },
      { tool: 'b', state: 'open', failures: 2, openedAt: 45_000, at: 45_000 },
    ]);
    expect(registry.get('a').state).toBe('open');
    expect(registry.get('b').state).toBe('open');
    expect(registry.get('b').tryAcquire()).toMatchObject({ admitted: false, retryAfterMs: RECOVERY - 5_000 });
  });

  it('bumps its revision only when a reported outcome changes the state', () => {
    const { breaker } = breakerAt(0);
    breaker.recordFailure();
    expect(breaker.revision).toBe(0);
    breaker.recordFailure();
    expect(breaker.revision).toBe(1);
  });
});
