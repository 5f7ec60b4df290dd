/**
 * The runtime side of a circuit breaker: runs `circuitBreakerMachine` as an actor and gives the
 * executor three cheap calls — `tryAcquire` before a tool call, `recordSuccess` /
 * `recordFailure` after it. The machine holds all state and rules; this file only translates.
 */
import { createActor, type Actor, type ActorOptions, type AnyActorLogic, type InspectionEvent, type Observer } from 'xstate';
import { z } from 'zod';
import {
  circuitBreakerMachine,
  type CircuitBreakerEvent,
  type CircuitBreakerStateValue,
} from '../../machines/circuitBreaker.machine.ts';
import { ConfigurationError, describeError } from '../errors.ts';
import { circuitOpenMessage } from './circuitOpenError.ts';

/** XState's timer interface (`setTimeout`/`clearTimeout`), which xstate does not export by name. */
export type BreakerClock = NonNullable<ActorOptions<AnyActorLogic>['clock']>;

/**
 * The tunable numbers of a breaker; omitted ones come from `DEFAULTS.breaker`.
 *
 * @example
 * ```ts
 * BreakerOptions.parse({ failureThreshold: 5 }); // ok; { failureThreshold: 0 } throws
 * ```
 */
export const BreakerOptions = z.object({
  failureThreshold: z.number().int().min(1).optional(),
  recoveryTimeoutMs: z.number().min(0).max(2_147_483_647).optional(),
  halfOpenMaxCalls: z.number().int().min(1).optional(),
});
export type BreakerOptions = z.infer<typeof BreakerOptions>;

/** Where a breaker's actor reports to, and which clock it runs on (tests pass `SimulatedClock`). */
export interface BreakerRuntimeOptions {
  /** XState inspection observer (e.g. the Stately inspector's `inspect`). */
  readonly inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** Clock for the recovery timer. When it has `now()` (SimulatedClock does), it also dates openings. */
  readonly clock?: BreakerClock;
  /** Called if the breaker actor ever errors (its actions are pure assigns, so this is a safety net). */
  readonly onError?: (error: unknown) => void;
}

export interface CircuitBreakerOptions extends BreakerOptions, BreakerRuntimeOptions {
  /** The tool this breaker protects. */
  readonly name: string;
}

/**
 * The answer of `tryAcquire`: admitted, or refused with a reason for the model.
 *
 * @example
 * ```ts
 * const result: AcquireResult = breaker.tryAcquire();
 * if (!result.admitted) console.log(result.state, result.retryAfterMs, result.reason);
 * ```
 */
export type AcquireResult =
  | { readonly admitted: true }
  | {
      readonly admitted: false;
      readonly state: 'open' | 'halfOpen';
      /** Time until a probe call is admitted, in ms; only known while open. */
      readonly retryAfterMs?: number;
      /** Why the call was refused, phrased for the model. */
      readonly reason: string;
    };

/**
 * One tool's breaker, as the executor uses it (see {@link createCircuitBreaker}).
 *
 * @example
 * ```ts
 * if (breaker.state === 'open') console.log(`${breaker.name} is resting`);
 * ```
 */
export interface CircuitBreaker {
  readonly name: string;
  readonly state: CircuitBreakerStateValue;
  /** Ask before calling the tool. Admitted calls must be followed by `recordSuccess` or `recordFailure`. */
  tryAcquire(): AcquireResult;
  recordSuccess(): void;
  recordFailure(): void;
  /** Close the breaker and forget its failures. */
  reset(): void;
  /** The running machine, for inspection and snapshots. */
  readonly actor: Actor<typeof circuitBreakerMachine>;
  /** Stop the actor and its timer; afterwards the breaker admits every call and records nothing. */
  stop(): void;
}

// Shared results and events: the closed-state path of every tool call allocates nothing.
const ADMITTED: AcquireResult = Object.freeze({ admitted: true });
const SUCCESS: CircuitBreakerEvent = Object.freeze({ type: 'breaker.success' });
const ACQUIRE: CircuitBreakerEvent = Object.freeze({ type: 'breaker.acquire' });
const RESET: CircuitBreakerEvent = Object.freeze({ type: 'breaker.reset' });

/**
 * Creates and starts one tool's circuit breaker.
 *
 * @example
 * ```ts
 * const breaker = createCircuitBreaker({ name: 'search' });
 * const gate = breaker.tryAcquire();
 * if (!gate.admitted) return observation(gate.reason);
 * try { const out = await search(args); breaker.recordSuccess(); return out; }
 * catch (e) { breaker.recordFailure(); throw e; }
 * ```
 */
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
  const actor = createActor(circuitBreakerMachine, {
    input: { name, ...parsed.data },
    ...(clock === undefined ? {} : { clock }),
    ...(inspect === undefined ? {} : { inspect }),
  });
  let live = true;
  // XState rethrows an unobserved actor error from a timer, which would kill the host.
  actor.subscribe({
    error: (error) => {
      live = false;
      if (onError !== undefined) onError(error);
      else console.error(`circuit breaker ${JSON.stringify(name)} stopped: ${describeError(error)}`);
    },
  });
  actor.start();

  return {
    name,
    actor,
    get state() {
      return actor.getSnapshot().value;
    },
    tryAcquire() {
      if (!live) return ADMITTED;
      const snapshot = actor.getSnapshot();
      if (snapshot.value === 'closed') return ADMITTED;
      const { context } = snapshot;
      if (snapshot.value === 'open') {
        const retryAfterMs = Math.max(0, (context.openedAt ?? now()) + context.config.recoveryTimeoutMs - now());
        return { admitted: false, state: 'open', retryAfterMs, reason: circuitOpenMessage({ tool: name, state: 'open', retryAfterMs }) };
      }
      // halfOpen: the machine's guard decides; a refused acquire leaves probesInFlight unchanged.
      actor.send(ACQUIRE);
      if (actor.getSnapshot().context.probesInFlight > context.probesInFlight) return ADMITTED;
      return { admitted: false, state: 'halfOpen', reason: circuitOpenMessage({ tool: name, state: 'halfOpen' }) };
    },
    recordSuccess() {
      if (!live) return;
      const snapshot = actor.getSnapshot();
      // The common case — success while closed with nothing to forget — changes nothing; skip the send.
      if (snapshot.value === 'closed' && snapshot.context.consecutiveFailures === 0) return;
      actor.send(SUCCESS);
    },
    recordFailure() {
      if (live) actor.send({ type: 'breaker.failure', at: now() });
    },
    reset() {
      if (live) actor.send(RESET);
    },
    stop() {
      live = false;
      actor.stop();
    },
  };
}

function hasNow(clock: BreakerClock): clock is BreakerClock & { now(): number } {
  return typeof (clock as { now?: unknown }).now === 'function';
}
