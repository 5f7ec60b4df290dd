/**
 * The runtime side of a circuit breaker: runs `circuitBreakerMachine` as an actor and gives the
 * executor three cheap calls — `tryAcquire` before a tool call, `recordSuccess` /
 * `recordFailure` after it. The machine holds all state and rules; this file only translates.
 *
 * A breaker that has never seen a failure is closed with nothing to remember, which needs no
 * machine: its actor is created on the first failure, reset or read of `actor` (at once when an
 * inspector is attached, so the inspector shows every breaker). A thousand agents that never see
 * a failing tool do not pay a thousand actors.
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

/**
 * A breaker's state as a run's log keeps it, so a resumed run's breaker goes on where it was.
 * Times are the breaker clock's (epoch ms in production): a recovery window survives a restart.
 *
 * @example
 * ```ts
 * SavedBreaker.parse({ tool: 'search', state: 'open', failures: 2, openedAt: 1_700_000_000_000, at: 1_700_000_000_000 });
 * ```
 */
export const SavedBreaker = z.object({
  tool: z.string(),
  state: z.enum(['closed', 'open', 'halfOpen']),
  /** Consecutive failures counted when the state was saved. */
  failures: z.number().int().nonnegative(),
  /** When the breaker last opened; null when closed. */
  openedAt: z.number().nullable(),
  /** When the breaker changed to this state: of two saved states, the later one wins. */
  at: z.number(),
});
export type SavedBreaker = z.infer<typeof SavedBreaker>;

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
  /** The running machine, for inspection and snapshots (created on first read if no failure created it). */
  readonly actor: Actor<typeof circuitBreakerMachine>;
  /** Stop the actor and its timer; afterwards the breaker admits every call and records nothing. */
  stop(): void;
  /** Bumped by every state change a call reports (`recordSuccess`/`recordFailure`/`reset`): compare it around a call. */
  readonly revision: number;
  /** The state to keep in a run's log; `undefined` until the breaker's state first changes. */
  saved(): SavedBreaker | undefined;
  /**
   * Take a saved state, unless this breaker changed since (`saved.at` is not later than its last
   * change): a state shared by an agent's runs is never rolled back by an older run's log. An
   * open state whose recovery window has passed by now comes back half-open. True when taken.
   */
  restore(saved: SavedBreaker): boolean;
}

// Shared results and events: the closed-state path of every tool call allocates nothing.
const ADMITTED: AcquireResult = Object.freeze({ admitted: true });
const SUCCESS: CircuitBreakerEvent = Object.freeze({ type: 'breaker.success' });
const ACQUIRE: CircuitBreakerEvent = Object.freeze({ type: 'breaker.acquire' });
const RESET: CircuitBreakerEvent = Object.freeze({ type: 'breaker.reset' });

/**
 * Creates one tool's circuit breaker (its actor starts on the first failure; see the file header).
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
  let live = true;
  let started: Actor<typeof circuitBreakerMachine> | undefined;
  let revision = 0;
  /** When the state last changed (the clock's time); undefined while it never has. */
  let changedAt: number | undefined;
  const recoveryTimeoutMs = parsed.data.recoveryTimeoutMs ?? DEFAULTS.breaker.recoveryTimeoutMs;
  /** Send `event` and note a change of state it made. */
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
      ...(clock === undefined ? {} : { clock }),
      ...(inspect === undefined ? {} : { inspect }),
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
      // The common case — success while closed with nothing to forget — changes nothing; skip the send.
      if (snapshot.value === 'closed' && snapshot.context.consecutiveFailures === 0) return;
      send(started, SUCCESS);
    },
    recordFailure() {
      if (live) send(actorOf(), { type: 'breaker.failure', at: now() });
    },
    reset() {
      // Without an actor there is no history to forget.
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
      // A closed breaker with nothing to remember needs no actor (see the file header).
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
