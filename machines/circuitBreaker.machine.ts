/**
 * The circuit breaker of one tool as a pure statechart.
 *
 * closed ──N consecutive failures──▶ open ──recoveryTimeout──▶ halfOpen ──success──▶ closed
 *                                     ▲                            │
 *                                     └──────── failure ───────────┘
 *
 * The machine only decides; it never calls the tool. The runtime wrapper
 * (`src/resilience/circuitBreaker.ts`) reads the snapshot before each call and reports each
 * outcome back as an event. The one timer is the named delay `recoveryTimeout`, so tests drive
 * it with `SimulatedClock` and the inspector shows it.
 */
import { assign, setup } from 'xstate';
/**
 * Input of {@link circuitBreakerMachine}: the tool's name and every number it runs with (the
 * runtime's `createCircuitBreaker` fills in the defaults).
 *
 * @example
 * ```ts
 * const input: CircuitBreakerInput = { name: 'search', failureThreshold: 5, recoveryTimeoutMs: 30_000 };
 * ```
 */
export interface CircuitBreakerInput {
  /** The tool this breaker protects; it names the breaker in messages and the inspector. */
  readonly name: string;
  /** Consecutive failures that open the breaker. */
  readonly failureThreshold: number;
  /** How long an open breaker waits before admitting probes, in ms. */
  readonly recoveryTimeoutMs: number;
  /** Probe calls admitted at once while half-open. */
  readonly halfOpenMaxCalls: number;
}

/** The resolved numbers a breaker runs with. */
export interface CircuitBreakerConfig {
  readonly failureThreshold: number;
  readonly recoveryTimeoutMs: number;
  readonly halfOpenMaxCalls: number;
}

export interface CircuitBreakerContext {
  readonly name: string;
  readonly config: CircuitBreakerConfig;
  /**
   * Failures since the last success while closed. It stops counting once the breaker opens, so
   * the context stays bounded (persistable, and its state graph finite).
   */
  readonly consecutiveFailures: number;
  /** Probe calls admitted in the current half-open period. */
  readonly probesInFlight: number;
  /** When the breaker last opened (epoch ms, or the clock of whoever sent the failure); null when closed. */
  readonly openedAt: number | null;
}

/**
 * What the runtime tells a breaker. Lowercase and dot-namespaced like every actorloop event.
 *
 * @example
 * ```ts
 * actor.send({ type: 'breaker.failure', at: Date.now() });
 * ```
 */
export type CircuitBreakerEvent =
  /** A call through the breaker succeeded. */
  | { readonly type: 'breaker.success' }
  /** A call through the breaker failed; `at` is the time of the failure (defaults to `Date.now()`). */
  | { readonly type: 'breaker.failure'; readonly at?: number }
  /** Ask to admit one probe while half-open; refused (no change) beyond `halfOpenMaxCalls`. */
  | { readonly type: 'breaker.acquire' }
  /** Close the breaker and forget its history (an operator knows the tool is fixed). */
  | { readonly type: 'breaker.reset' }
  /**
   * Take a state saved before (a resumed run's breaker); an open one waits `remainingMs` of its
   * recovery timeout (the rest of the window it opened with), not a whole new one.
   */
  | {
      readonly type: 'breaker.restore';
      readonly state: CircuitBreakerStateValue;
      readonly consecutiveFailures: number;
      readonly openedAt: number | null;
      readonly remainingMs?: number;
    };

export type CircuitBreakerStateValue = 'closed' | 'open' | 'halfOpen';

/**
 * One tool's circuit breaker. Pure: it imports only `xstate` and the defaults constant.
 *
 * @example
 * ```ts
 * import { createActor } from 'xstate';
 * const actor = createActor(circuitBreakerMachine, { input: { name: 'search', failureThreshold: 2 } }).start();
 * actor.send({ type: 'breaker.failure' });
 * actor.send({ type: 'breaker.failure' });
 * actor.getSnapshot().value; // 'open' — and 'halfOpen' 60 s later
 * ```
 */
export const circuitBreakerMachine = setup({
  types: {
    context: {} as CircuitBreakerContext,
    events: {} as CircuitBreakerEvent,
    input: {} as CircuitBreakerInput,
  },
  guards: {
    reachesThreshold: ({ context }) => context.consecutiveFailures + 1 >= context.config.failureThreshold,
    hasProbeSlot: ({ context }) => context.probesInFlight < context.config.halfOpenMaxCalls,
    restoresOpen: ({ event }) => event.type === 'breaker.restore' && event.state === 'open',
    restoresHalfOpen: ({ event }) => event.type === 'breaker.restore' && event.state === 'halfOpen',
  },
  actions: {
    countFailure: assign({ consecutiveFailures: ({ context }) => context.consecutiveFailures + 1 }),
    forgetFailures: assign({ consecutiveFailures: 0 }),
    // Leaves consecutiveFailures at the threshold when re-opening from halfOpen (see context docs).
    recordOpening: assign({
      consecutiveFailures: ({ context }) => Math.max(context.consecutiveFailures, context.config.failureThreshold),
      probesInFlight: 0,
      openedAt: ({ event }) => (event.type === 'breaker.failure' && event.at !== undefined ? event.at : Date.now()),
    }),
    admitProbe: assign({ probesInFlight: ({ context }) => context.probesInFlight + 1 }),
    resetHistory: assign({ consecutiveFailures: 0, probesInFlight: 0, openedAt: null }),
    // Probes in flight when the state was saved died with the process that made them.
    restoreSaved: assign(({ context, event }) =>
      event.type === 'breaker.restore'
        ? {
            consecutiveFailures: Math.max(0, event.consecutiveFailures),
            probesInFlight: 0,
            openedAt: event.state === 'closed' ? null : event.openedAt,
          }
        : context,
    ),
  },
  delays: {
    recoveryTimeout: ({ context, event }) =>
      event.type === 'breaker.restore' && event.remainingMs !== undefined
        ? Math.min(Math.max(0, event.remainingMs), context.config.recoveryTimeoutMs)
        : context.config.recoveryTimeoutMs,
  },
}).createMachine({
  id: 'circuitBreaker',
  description: 'Protects one tool: stops calling it after repeated failures, then probes it again.',
  context: ({ input }) => ({
    name: input.name,
    config: {
      failureThreshold: input.failureThreshold,
      recoveryTimeoutMs: input.recoveryTimeoutMs,
      halfOpenMaxCalls: input.halfOpenMaxCalls,
    },
    consecutiveFailures: 0,
    probesInFlight: 0,
    openedAt: null,
  }),
  initial: 'closed',
  on: {
    'breaker.reset': { target: '.closed', actions: 'resetHistory' },
    // Re-entered even when already there: an open state restarts its timer for the remaining time.
    'breaker.restore': [
      { guard: 'restoresOpen', target: '.open', reenter: true, actions: 'restoreSaved' },
      { guard: 'restoresHalfOpen', target: '.halfOpen', reenter: true, actions: 'restoreSaved' },
      { target: '.closed', reenter: true, actions: 'restoreSaved' },
    ],
  },
  states: {
    closed: {
      description: 'Healthy: every call is admitted; consecutive failures are counted and a success clears the count.',
      on: {
        'breaker.success': { actions: 'forgetFailures' },
        'breaker.failure': [
          { guard: 'reachesThreshold', target: 'open', actions: 'recordOpening' },
          { actions: 'countFailure' },
        ],
      },
    },
    open: {
      description:
        'Failing repeatedly: every call is rejected at once until the recovery timeout elapses. ' +
        'Outcomes of calls admitted before opening are ignored.',
      after: { recoveryTimeout: 'halfOpen' },
    },
    halfOpen: {
      description:
        'Probing: admits up to halfOpenMaxCalls calls; the first success closes the breaker, the first failure re-opens it.',
      on: {
        'breaker.acquire': { guard: 'hasProbeSlot', actions: 'admitProbe' },
        'breaker.success': { target: 'closed', actions: 'resetHistory' },
        'breaker.failure': { target: 'open', actions: 'recordOpening' },
      },
    },
  },
});
