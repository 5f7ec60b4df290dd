/**
 * Runs `circuitBreakerMachine` as an actor; the machine holds all state and rules. A breaker that
 * never failed needs no machine, so its actor is created on the first failure, reset or read of `actor`.
 */
import { createActor, type Actor, type ActorOptions, type AnyActorLogic, type InspectionEvent, type Observer } from 'xstate';
import { z } from 'zod';
import {
  circuitBreakerMachine,
  type CircuitBreakerEvent,
  type CircuitBreakerStateValue,
} from '../../machines/circuitBreaker.machine.ts';
import { ConfigurationError, describeError } from '../core/errors.ts';
import { DEFAULTS } from '../core/defaults.ts';
import { circuitOpenMessage } from './circuitOpenError.ts';
import { defined } from '../core/defined.ts';

/** xstate does not export its timer interface by name. */
export type BreakerClock = NonNullable<ActorOptions<AnyActorLogic>['clock']>;

export const BreakerOptions = z.object({
  failureThreshold: z.number().int().min(1).optional(),
  recoveryTimeoutMs: z.number().min(0).max(2_147_483_647).optional(),
  halfOpenMaxCalls: z.number().int().min(1).optional(),
});
export type BreakerOptions = z.infer<typeof BreakerOptions>;

/** Times are the breaker clock's (epoch ms in production), so a recovery window survives a restart. */
export const SavedBreaker = z.object({
  tool: z.string(),
  state: z.enum(['closed', 'open', 'halfOpen']),
  failures: z.number().int().nonnegative(),
  openedAt: z.number().nullable(),
  /** Of two saved states, the later one wins. */
  at: z.number(),
});
export type SavedBreaker = z.infer<typeof SavedBreaker>;

export interface BreakerRuntimeOptions {
  readonly inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** When it has `now()` (SimulatedClock does), it also dates openings. */
  readonly clock?: BreakerClock;
  /** A safety net: the actor's actions are pure assigns. */
  readonly onError?: (error: unknown) => void;
}

export interface CircuitBreakerOptions extends BreakerOptions, BreakerRuntimeOptions {
  readonly name: string;
}

export type AcquireResult =
  | { readonly admitted: true }
  | {
      readonly admitted: false;
      readonly state: 'open' | 'halfOpen';
      /** Only known while open. */
      readonly retryAfterMs?: number;
      /** Phrased for the model. */
      readonly reason: string;
    };

export interface CircuitBreaker {
  readonly name: string;
  readonly state: CircuitBreakerStateValue;
  /** Admitted calls must be followed by `recordSuccess` or `recordFailure`. */
  tryAcquire(): AcquireResult;
  recordSuccess(): void;
  recordFailure(): void;
  reset(): void;
  readonly actor: Actor<typeof circuitBreakerMachine>;
  /** Afterwards the breaker admits every call and records nothing. */
  stop(): void;
  /** Compare it around a call to see whether the call changed the state. */
  readonly revision: number;
  saved(): SavedBreaker | undefined;
  /**
   * Ignored when this breaker changed since, so an older run's log never rolls back shared state.
   * An open state whose recovery window has passed comes back half-open.
   */
  restore(saved: SavedBreaker): boolean;
}

// Shared results and events: the closed-state path of every tool call allocates nothing.
const ADMITTED: AcquireResult = Object.freeze({ admitted: true });
const SUCCESS: CircuitBreakerEvent = Object.freeze({ type: 'breaker.success' });
const ACQUIRE: CircuitBreakerEvent = Object.freeze({ type: 'breaker.acquire' });
const RESET: CircuitBreakerEvent = Object.freeze({ type: 'breaker.reset' });

export function createCircuitBreaker(options: CircuitBreakerOptions): CircuitBreaker {
  const parsed = BreakerOptions.safeParse(options);
  if (!parsed.success || typeof options.name !== 'string') {
    throw new ConfigurationError(
      `Invalid circuit breaker options for ${JSON.stringify(options.name)}: ${parsed.success ? 'name must be a string' : z.prettifyError(parsed.error)}. ` +
        'Use failureThreshold ≥ 1 and halfOpenMaxCalls ≥ 1 (integers) and recoveryTimeoutMs ≥ 0.',
    );
  }
  const { name, clock, inspect, onError } = options;
  const now = clock !== undefined && hasNow(clock) ? () => clock.now() : Date.now;
  let live = true;
  let started: Actor<typeof circuitBreakerMachine> | undefined;
  let revision = 0;
  let changedAt: number | undefined;
  const recoveryTimeoutMs = parsed.data.recoveryTimeoutMs ?? DEFAULTS.breaker.recoveryTimeoutMs;
  const send = (actor: Actor<typeof circuitBreakerMachine>, event: CircuitBreakerEvent): void => {
    const before = actor.getSnapshot().value;
    actor.send(event);
    if (actor.getSnapshot().value !== before) {
      revision++;
      changedAt = now();
    }
  };
  const actorOf = (): Actor<typeof circuitBreakerMachine> => {
    if (started !== undefined) return started;
    const actor = createActor(circuitBreakerMachine, {
      input: {
        name,
        failureThreshold: parsed.data.failureThreshold ?? DEFAULTS.breaker.failureThreshold,
        recoveryTimeoutMs,
        halfOpenMaxCalls: parsed.data.halfOpenMaxCalls ?? DEFAULTS.breaker.halfOpenMaxCalls,
      },
      ...defined({ clock, inspect }),
    });
    // XState rethrows an unobserved actor error from a timer, which would kill the host.
    actor.subscribe({
      error: (error) => {
        live = false;
        if (onError !== undefined) onError(error);
        else console.error(`circuit breaker ${JSON.stringify(name)} stopped: ${describeError(error)}`);
      },
    });
    actor.start();
    // A breaker stopped before its actor existed hands out a stopped actor.
    if (!live) actor.stop();
    started = actor;
    return actor;
  };
  if (inspect !== undefined) actorOf();

  return {
    name,
    get actor() {
      return actorOf();
    },
    get state() {
      return started === undefined ? 'closed' : started.getSnapshot().value;
    },
    tryAcquire() {
      if (!live || started === undefined) return ADMITTED;
      const snapshot = started.getSnapshot();
      if (snapshot.value === 'closed') return ADMITTED;
      const { context } = snapshot;
      if (snapshot.value === 'open') {
        const retryAfterMs = Math.max(0, (context.openedAt ?? now()) + context.config.recoveryTimeoutMs - now());
        return { admitted: false, state: 'open', retryAfterMs, reason: circuitOpenMessage({ tool: name, state: 'open', retryAfterMs }) };
      }
      // halfOpen: the machine's guard decides; a refused acquire leaves probesInFlight unchanged.
      started.send(ACQUIRE);
      if (started.getSnapshot().context.probesInFlight > context.probesInFlight) return ADMITTED;
      return { admitted: false, state: 'halfOpen', reason: circuitOpenMessage({ tool: name, state: 'halfOpen' }) };
    },
    recordSuccess() {
      if (!live || started === undefined) return;
      const snapshot = started.getSnapshot();
      if (snapshot.value === 'closed' && snapshot.context.consecutiveFailures === 0) return;
      send(started, SUCCESS);
    },
    recordFailure() {
      if (live) send(actorOf(), { type: 'breaker.failure', at: now() });
    },
    reset() {
      if (live && started !== undefined) send(started, RESET);
    },
    stop() {
      live = false;
      started?.stop();
    },
    get revision() {
      return revision;
    },
    saved() {
      if (changedAt === undefined) return undefined;
      const context = started?.getSnapshot().context;
      return {
        tool: name,
        state: started === undefined ? 'closed' : started.getSnapshot().value,
        failures: context?.consecutiveFailures ?? 0,
        openedAt: context?.openedAt ?? null,
        at: changedAt,
      };
    },
    restore(saved) {
      if (!live || (changedAt !== undefined && saved.at <= changedAt)) return false;
      changedAt = saved.at;
      if (saved.state === 'closed' && saved.failures === 0 && started === undefined) return true;
      const openedAt = saved.openedAt ?? saved.at;
      const remainingMs = openedAt + recoveryTimeoutMs - now();
      const state = saved.state === 'open' && remainingMs <= 0 ? 'halfOpen' : saved.state;
      actorOf().send({
        type: 'breaker.restore',
        state,
        consecutiveFailures: saved.failures,
        openedAt: state === 'closed' ? null : openedAt,
        ...(state === 'open' ? { remainingMs } : {}),
      });
      return true;
    },
  };
}

function hasNow(clock: BreakerClock): clock is BreakerClock & { now(): number } {
  return typeof (clock as { now?: unknown }).now === 'function';
}
