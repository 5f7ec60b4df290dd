/**
 * Model-based tests of the circuit breaker statechart with @xstate/graph v3.
 *
 * How the recovery timer is traversed: `createTestModel` refuses machines with `after`
 * transitions, but `getAdjacencyMap` / `getSimplePaths` accept them. Passing our own `events`
 * list replaces the default "events this state handles" enumeration, so every event is tried in
 * every state (unhandled ones must change nothing). The list includes the delayed event itself,
 * `xstate.after.recoveryTimeout.circuitBreaker.open`, which the pure `transition` function
 * handles like any other event. When a path is replayed on a running actor, that event is
 * replaced by advancing a SimulatedClock by the recovery timeout, so the real timer is exercised.
 *
 * Expected states come from `referenceStep` below, written from the specification, not
 * from the machine.
 */
import { getAdjacencyMap, getSimplePaths, type AdjacencyValue } from '@xstate/graph';
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock, type SnapshotFrom } from 'xstate';
import { circuitBreakerMachine, type CircuitBreakerEvent } from '../../machines/circuitBreaker.machine.ts';
import { DEFAULTS } from '../../src/core/defaults.ts';
import { createCircuitBreaker } from '../../src/resilience/circuitBreaker.ts';

// The event xstate raises when `open`'s `after: { recoveryTimeout }` fires (checked below).
const AFTER = 'xstate.after.recoveryTimeout.circuitBreaker.open';
type AfterEvent = { readonly type: typeof AFTER };
type ModelEvent = CircuitBreakerEvent | AfterEvent;
type Snapshot = SnapshotFrom<typeof circuitBreakerMachine>;

interface Config {
  readonly failureThreshold: number;
  readonly halfOpenMaxCalls: number;
  readonly recoveryTimeoutMs: number;
}
interface Expected {
  readonly value: 'closed' | 'open' | 'halfOpen';
  readonly consecutiveFailures: number;
  readonly probesInFlight: number;
  readonly openedAt: number | null;
}

const FAILED_AT = 1_000;
const EVENTS: readonly ModelEvent[] = [
  { type: 'breaker.success' },
  { type: 'breaker.failure', at: FAILED_AT },
  { type: 'breaker.acquire' },
  { type: 'breaker.reset' },
  { type: AFTER },
];
// The traversal is typed with the machine's own events; the delayed event is internal to xstate.
const TRAVERSAL_EVENTS = EVENTS as unknown as CircuitBreakerEvent[];

const CLOSED: Expected = { value: 'closed', consecutiveFailures: 0, probesInFlight: 0, openedAt: null };

/** The specification as a tiny independent state machine. */
function referenceStep(state: Expected, event: ModelEvent, config: Config): Expected {
  if (event.type === 'breaker.reset') return CLOSED;
  const open = (): Expected => ({
    value: 'open',
    consecutiveFailures: Math.max(state.consecutiveFailures, config.failureThreshold),
    probesInFlight: 0,
    openedAt: FAILED_AT,
  });
  switch (state.value) {
    case 'closed':
      if (event.type === 'breaker.success') return CLOSED;
      if (event.type === 'breaker.failure') {
        return state.consecutiveFailures + 1 >= config.failureThreshold
          ? open()
          : { ...state, consecutiveFailures: state.consecutiveFailures + 1 };
      }
      return state;
    case 'open':
      return event.type === AFTER ? { ...state, value: 'halfOpen' } : state;
    case 'halfOpen':
      if (event.type === 'breaker.success') return CLOSED;
      if (event.type === 'breaker.failure') return open();
      if (event.type === 'breaker.acquire' && state.probesInFlight < config.halfOpenMaxCalls) {
        return { ...state, probesInFlight: state.probesInFlight + 1 };
      }
      return state;
  }
}

function observed(snapshot: Snapshot): Expected {
  const { consecutiveFailures, probesInFlight, openedAt } = snapshot.context;
  return { value: snapshot.value, consecutiveFailures, probesInFlight, openedAt };
}

const CONFIGS: readonly Config[] = [
  { failureThreshold: 2, halfOpenMaxCalls: 1, recoveryTimeoutMs: 500 },
  { failureThreshold: 3, halfOpenMaxCalls: 2, recoveryTimeoutMs: 60_000 },
];

describe.each(CONFIGS)('circuit breaker machine (threshold $failureThreshold, probes $halfOpenMaxCalls)', (config) => {
  const input = { name: 'tool', ...config };
  // `limit` turns an unbounded context (a broken guard) into a failed test instead of a hang.
  const traversal = { input, events: TRAVERSAL_EVENTS, limit: 1_000 };
  // The map is keyed by branded strings, which Object.values cannot see through.
  const graph = () =>
    Object.values(getAdjacencyMap(circuitBreakerMachine, traversal) as Record<string, AdjacencyValue<Snapshot, ModelEvent>>);

  it('has exactly the states the specification allows', () => {
    const vertices = graph();
    const states = vertices.map((vertex) => observed(vertex.state));
    // closed with 0…threshold-1 failures, open, halfOpen with 0…maxCalls probes.
    expect(states).toHaveLength(config.failureThreshold + 1 + config.halfOpenMaxCalls + 1);
    expect(new Set(states.map((s) => s.value))).toEqual(new Set(['closed', 'open', 'halfOpen']));
  });

  it('agrees with the reference model on every transition of the graph', () => {
    const vertices = graph();
    let edges = 0;
    for (const vertex of vertices) {
      for (const { event, state: next } of Object.values(vertex.transitions)) {
        edges += 1;
        expect(observed(next), `${observed(vertex.state).value} --${event.type}-->`).toEqual(
          referenceStep(observed(vertex.state), event, config),
        );
      }
    }
    expect(edges).toBe(vertices.length * EVENTS.length);
  });

  it('follows the reference model on every simple path, extended by every event, in a running actor', () => {
    const paths = getSimplePaths(circuitBreakerMachine, traversal);
    expect(paths.length).toBeGreaterThanOrEqual(graph().length);
    let walks = 0;
    for (const path of paths) {
      // v3 paths start with a synthetic `xstate.init` step; each step holds the state *after* its event.
      const [init, ...steps] = path.steps;
      expect(init?.event.type).toBe('xstate.init');
      expect(observed(init!.state)).toEqual(CLOSED);
      for (const last of EVENTS) {
        const clock = new SimulatedClock();
        const actor = createActor(circuitBreakerMachine, { input, clock }).start();
        let expected = CLOSED;
        const trail: string[] = [];
        for (const { event, state: graphState } of [...steps, { event: last, state: undefined }]) {
          expected = referenceStep(expected, event, config);
          if (event.type === AFTER) clock.increment(config.recoveryTimeoutMs);
          else actor.send(event);
          trail.push(event.type);
          expect(observed(actor.getSnapshot()), trail.join(' → ')).toEqual(expected);
          if (graphState !== undefined) expect(observed(graphState), trail.join(' → ')).toEqual(expected);
        }
        actor.stop();
        walks += 1;
      }
    }
    expect(walks).toBe(paths.length * EVENTS.length);
  });
});

describe('circuit breaker machine', () => {
  it('raises the recovery event the model-based tests traverse', () => {
    expect(circuitBreakerMachine.states.open!.after.map((t) => t.eventType)).toEqual([AFTER]);
  });

  it('stays open until the full recovery timeout has elapsed', () => {
    const clock = new SimulatedClock();
    const actor = createActor(circuitBreakerMachine, { input: { name: 't', failureThreshold: 1, recoveryTimeoutMs: 60_000, halfOpenMaxCalls: 1 }, clock }).start();
    actor.send({ type: 'breaker.failure', at: 0 });
    clock.increment(59_999);
    expect(actor.getSnapshot().value).toBe('open');
    clock.increment(1);
    expect(actor.getSnapshot().value).toBe('halfOpen');
    actor.stop();
  });

  it('gets DEFAULTS.breaker through its input when createCircuitBreaker is given no numbers', () => {
    const breaker = createCircuitBreaker({ name: 't' });
    expect(breaker.actor.getSnapshot().context.config).toEqual(DEFAULTS.breaker);
    breaker.actor.stop();
  });

  it('describes every state for the inspector', () => {
    for (const node of Object.values(circuitBreakerMachine.states)) {
      expect(node.description, node.key).toMatch(/\w{3,}/);
    }
  });

  it('restores its state and context from a JSON round trip of its persisted snapshot', () => {
    const clock = new SimulatedClock();
    const input = { name: 't', failureThreshold: 1, recoveryTimeoutMs: 100, halfOpenMaxCalls: 1 };
    const first = createActor(circuitBreakerMachine, { input, clock }).start();
    first.send({ type: 'breaker.failure', at: 5 });
    const persisted: unknown = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();
    const restored = createActor(circuitBreakerMachine, { input, clock, snapshot: persisted as Snapshot }).start();
    expect(observed(restored.getSnapshot())).toEqual({ value: 'open', consecutiveFailures: 1, probesInFlight: 0, openedAt: 5 });
    restored.send({ type: 'breaker.reset' });
    expect(restored.getSnapshot().value).toBe('closed');
    restored.stop();
  });
});
