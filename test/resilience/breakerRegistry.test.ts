import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { createBreakerRegistry, type BreakerRegistry } from '../../src/resilience/breakerRegistry.ts';

const registries: BreakerRegistry[] = [];
function registry(...args: Parameters<typeof createBreakerRegistry>): BreakerRegistry {
  const created = createBreakerRegistry(...args);
  registries.push(created);
  return created;
}

afterEach(() => {
  for (const r of registries.splice(0)) r.stopAll();
});

describe('breaker registry', () => {
  it('creates a breaker only when a tool is first used, and reuses it', () => {
    const breakers = registry();
    expect([...breakers.entries()]).toEqual([]);
    const first = breakers.get('search');
    expect(breakers.get('search')).toBe(first);
    expect([...breakers.entries()].map(([name]) => name)).toEqual(['search']);
  });

  it('keeps one independent breaker per tool', () => {
    const breakers = registry({ failureThreshold: 1 });
    breakers.get('flaky').recordFailure();
    expect(breakers.get('flaky').state).toBe('open');
    expect(breakers.get('steady').state).toBe('closed');
  });

  it('applies per-tool overrides on top of the defaults', () => {
    const breakers = registry({ failureThreshold: 5, recoveryTimeoutMs: 1_000 }, { flaky: { failureThreshold: 1 } });
    expect(breakers.get('flaky').actor.getSnapshot().context.config).toEqual({
      failureThreshold: 1,
      recoveryTimeoutMs: 1_000,
      halfOpenMaxCalls: 1,
    });
    expect(breakers.get('other').actor.getSnapshot().context.config.failureThreshold).toBe(5);
  });

  it('treats __proto__, constructor and toString as plain tool names', () => {
    const breakers = registry({ failureThreshold: 2 }, { search: { failureThreshold: 9 } });
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const breaker = breakers.get(name);
      expect(breaker.name).toBe(name);
      expect(breaker.actor.getSnapshot().context.config.failureThreshold).toBe(2);
      expect(breakers.get(name)).toBe(breaker);
    }
    expect([...breakers.entries()]).toHaveLength(4);
  });

  it('runs every breaker on the given clock and stops them all', () => {
    const clock = new SimulatedClock();
    const breakers = registry({ failureThreshold: 1, recoveryTimeoutMs: 100 }, {}, { clock });
    const a = breakers.get('a');
    const b = breakers.get('b');
    a.recordFailure();
    clock.increment(100);
    expect(a.state).toBe('halfOpen');
    breakers.stopAll();
    expect([a.actor.getSnapshot().status, b.actor.getSnapshot().status]).toEqual(['stopped', 'stopped']);
    expect([...breakers.entries()]).toEqual([]);
  });
});
