/** Tool names come from the model, so lookups go through a Map and own-property checks. */
import { createCircuitBreaker, type BreakerOptions, type BreakerRuntimeOptions, type CircuitBreaker, type SavedBreaker } from './circuitBreaker.ts';

export interface BreakerRegistry {
  /** Created (and started) on first use. */
  get(toolName: string): CircuitBreaker;
  stopAll(): void;
  entries(): IterableIterator<[string, CircuitBreaker]>;
  /** Each breaker keeps its own state if that is newer. */
  restore(saved: Iterable<SavedBreaker>): void;
}

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
