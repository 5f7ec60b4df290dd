import { describe, expect, it, vi } from 'vitest';
import type * as XState from 'xstate';

// Counts the actors XState creates, so the test sees when a breaker's machine comes to life.
const created = vi.hoisted(() => ({ ids: [] as string[] }));
vi.mock('xstate', async (importOriginal) => {
  const xstate = await importOriginal<typeof XState>();
  return {
    ...xstate,
    createActor: ((logic: { id?: string }, options?: unknown) => {
      created.ids.push(String(logic.id));
      return xstate.createActor(logic as never, options as never);
    }) as typeof xstate.createActor,
  };
});

const { createCircuitBreaker } = await import('../../src/resilience/circuitBreaker.ts');

const breakersCreated = () => created.ids.filter((id) => id === 'circuitBreaker').length;

describe('circuit breaker actor creation', () => {
  it('runs no machine while a breaker has only seen successes, and starts one on the first failure', () => {
    created.ids.length = 0;
    const b = createCircuitBreaker({ name: 'search', failureThreshold: 2 });
    for (let i = 0; i < 100; i++) {
      expect(b.tryAcquire()).toEqual({ admitted: true });
      b.recordSuccess();
    }
    b.reset();
    expect(b.state).toBe('closed');
    expect(breakersCreated()).toBe(0);

    b.recordFailure();
    expect(breakersCreated()).toBe(1);
    expect(b.actor.getSnapshot().context.consecutiveFailures).toBe(1);
    b.recordFailure();
    expect(b.state).toBe('open');
    expect(b.tryAcquire().admitted).toBe(false);
    expect(breakersCreated()).toBe(1);
    b.stop();
  });

  it('creates the machine at once when an inspector is attached, so the inspector shows every breaker', () => {
    created.ids.length = 0;
    const seen: string[] = [];
    const b = createCircuitBreaker({ name: 'search', inspect: (event) => seen.push(event.type) });
    expect(breakersCreated()).toBe(1);
    expect(seen).toContain('@xstate.actor');
    b.stop();
  });

  it('hands out a stopped actor when stopped before any failure, and then records nothing', () => {
    const b = createCircuitBreaker({ name: 'search', failureThreshold: 1 });
    b.stop();
    b.recordFailure();
    expect(b.state).toBe('closed');
    expect(b.tryAcquire()).toEqual({ admitted: true });
    expect(b.actor.getSnapshot().status).toBe('stopped');
  });

  it('reads the machine on first access of `actor` with the configured numbers', () => {
    created.ids.length = 0;
    const b = createCircuitBreaker({ name: 'search', failureThreshold: 4, recoveryTimeoutMs: 10 });
    expect(breakersCreated()).toBe(0);
    expect(b.actor.getSnapshot().context.config).toEqual({ failureThreshold: 4, recoveryTimeoutMs: 10, halfOpenMaxCalls: 1 });
    expect(breakersCreated()).toBe(1);
    b.stop();
  });
});
