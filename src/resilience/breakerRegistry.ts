/**
 * One circuit breaker per tool, created the first time the tool is called. Tool names come from
 * the model, so lookups go through a Map and own-property checks: `__proto__` or `constructor`
 * is just another tool name.
 */
import { createCircuitBreaker, type BreakerOptions, type BreakerRuntimeOptions, type CircuitBreaker, type SavedBreaker } from './circuitBreaker.ts';

/**
 * The per-tool breakers of one agent (see {@link createBreakerRegistry}).
 *
 * @example
 * ```ts
 * for (const [tool, breaker] of registry.entries()) console.log(tool, breaker.state);
 * ```
 */
export interface BreakerRegistry {
  /** The breaker of `toolName`, created (and started) on first use. */
  get(toolName: string): CircuitBreaker;
  /** Stop every breaker created so far (their timers included) and forget them. */
  stopAll(): void;
  /** The breakers created so far, by tool name. */
  entries(): IterableIterator<[string, CircuitBreaker]>;
  /** Give each saved state to its tool's breaker, which keeps its own if that is newer (see `CircuitBreaker.restore`). */
  restore(saved: Iterable<SavedBreaker>): void;
}

/**
 * Creates a lazy registry of breakers: `defaults` apply to every tool, `overrides[tool]` on top.
 *
 * @example
 * ```ts
 * const breakers = createBreakerRegistry({ failureThreshold: 5 }, { flaky_api: { recoveryTimeoutMs: 10_000 } });
 * const decision = breakers.get('flaky_api').tryAcquire();
 * // …on shutdown
 * breakers.stopAll();
 * ```
 */
export function createBreakerRegistry(
  defaults: BreakerOptions = {},
  overrides: Readonly<Record<string, BreakerOptions>> = {},
  options: BreakerRuntimeOptions = {},
): BreakerRegistry {
  const breakers = new Map<string, CircuitBreaker>();
  const get = (toolName: string): CircuitBreaker => {
    let breaker = breakers.get(toolName);
    if (breaker === undefined) {
      // Object.hasOwn: a plain `overrides[toolName]` would read Object.prototype for '__proto__'.
      const override = Object.hasOwn(overrides, toolName) ? overrides[toolName] : undefined;
      breaker = createCircuitBreaker({ ...options, ...defaults, ...override, name: toolName });
      breakers.set(toolName, breaker);
    }
    return breaker;
  };
  return {
    get,
    stopAll() {
      for (const breaker of breakers.values()) breaker.stop();
      breakers.clear();
    },
    entries() {
      return breakers.entries();
    },
    restore(saved) {
      for (const state of saved) get(state.tool).restore(state);
    },
  };
}
