/**
 * One provided agent machine for the whole process. `agentMachine.provide()` builds a new
 * machine — its state-node tree plus the caches XState fills on first use, about 22 KB — so
 * providing per agent made a thousand agents pay that a thousand times and run their first
 * iterations on cold caches (measured: 1 000 separate agents took 1.4× the wall time of 1 000
 * runs of one agent). Instead every run's actor is bound to its agent's runtime through the
 * run's actor system, which every child actor of the run shares.
 */
import type { AnyActorRef, PromiseActorLogic, PromiseSnapshot } from 'xstate';
import { agentMachine } from '../../machines/agent.machine.ts';
import type {
  ActInput,
  ActOutput,
  GateInput,
  GateOutput,
  HydrateInput,
  HydrateOutput,
  ReasonInput,
  ReasonOutput,
} from '../../machines/agent.types.ts';
import type { Cancellation } from '../executor/timeout.ts';
import { systemBinding, type ActorSystemOf } from './systemBinding.ts';

/** What a phase implementation receives (the subset of XState's promise-actor arguments actorloop uses). */
export interface PhaseArgs<TInput> {
  readonly input: TInput;
  /** Aborted when the phase is stopped (the run was cancelled or timed out). */
  readonly signal: AbortSignal;
  /** The same cancellation, readable without making `signal` (for work that may never need one). */
  readonly cancellation: Cancellation;
}

/** A phase implementation: the body of a promise actor. */
export type Phase<TOutput, TInput> = (args: PhaseArgs<TInput>) => PromiseLike<TOutput>;

/**
 * An agent's implementations of the machine's side-effecting phases. Without `hydrate`, the
 * machine's own (inject nothing) is used.
 *
 * @example
 * ```ts
 * const runtime: AgentRuntime = {
 *   reason: ({ input, signal }) => reason(input, deps, scope, signal),
 *   gate: ({ input }) => planCalls(input, deps, scope),
 *   act: ({ input, signal }) => execute(input, signal),
 * };
 * ```
 */
export interface AgentRuntime {
  readonly reason: Phase<ReasonOutput, ReasonInput>;
  readonly hydrate?: Phase<HydrateOutput, HydrateInput>;
  readonly gate: Phase<GateOutput, GateInput>;
  readonly act: Phase<ActOutput, ActInput>;
}

/**
 * Type a phase implementation (an identity function: it only gives the arguments their types).
 *
 * @example
 * ```ts
 * const gate = phase<GateOutput, GateInput>(({ input }) => planCalls(input, deps, scope));
 * ```
 */
export function phase<TOutput, TInput>(implementation: Phase<TOutput, TInput>): Phase<TOutput, TInput> {
  return implementation;
}

const runtimes = systemBinding<AgentRuntime>(
  'This agent-machine actor has no runtime: start runs with createAgent(), or bind one with bindRuntime(actor, runtime) before actor.start().',
);
const runtimeOf = (system: ActorSystemOf): AgentRuntime => runtimes.of(system);

const NOTHING_TO_INJECT: HydrateOutput = Object.freeze({ inject: Object.freeze([]) });

const RESOLVED = 'actorloop.phase.resolved';
const REJECTED = 'actorloop.phase.rejected';
/** XState's stop event, sent to a child's logic when its state is exited (a cancelled run). */
const STOP = 'xstate.stop';

/** The abort controllers of phases that read their signal, by phase actor. */
const controllers = new WeakMap<AnyActorRef, AbortController>();

/**
 * What a phase implementation receives. The signal is created on first read: on Node 20 an
 * AbortSignal is an EventTarget that costs microseconds to make and to collect, and XState's
 * `fromPromise` makes one for every invoked actor — three per iteration, where the gate never
 * reads its own and the others only when their work can be cancelled.
 */
class PhaseCall<TInput> implements PhaseArgs<TInput>, Cancellation {
  constructor(
    readonly input: TInput,
    private readonly self: AnyActorRef,
  ) {}

  get cancellation(): Cancellation {
    return this;
  }

  get aborted(): boolean {
    const controller = controllers.get(this.self);
    return controller === undefined ? this.self.getSnapshot().status === 'stopped' : controller.signal.aborted;
  }

  get reason(): unknown {
    return this.signal.reason;
  }

  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void {
    this.signal.addEventListener(type, listener, options);
  }

  removeEventListener(type: 'abort', listener: () => void): void {
    // Nothing can be listening before the signal exists.
    if (controllers.has(this.self)) this.signal.removeEventListener(type, listener);
  }

  get signal(): AbortSignal {
    let controller = controllers.get(this.self);
    if (controller === undefined) {
      controller = new AbortController();
      // Read after the phase was stopped: the work sees a signal that is already aborted.
      if (this.self.getSnapshot().status === 'stopped') controller.abort();
      else controllers.set(this.self, controller);
    }
    return controller.signal;
  }
}

/**
 * A promise actor, like XState's `fromPromise`, whose signal is created only when read (see
 * {@link PhaseCall}). Same snapshots (so persisted runs restore either way), same settlement:
 * done with the output, error with the rejection, stopped (and aborted) when its state is exited.
 */
function fromPhase<TOutput, TInput>(run: (call: PhaseCall<TInput>, system: ActorSystemOf) => PromiseLike<TOutput>): PromiseActorLogic<TOutput, TInput> {
  return {
    config: run,
    transition: (snapshot, event, { self }): PromiseSnapshot<TOutput, TInput> => {
      if (snapshot.status !== 'active') return snapshot;
      switch (event.type) {
        case RESOLVED:
          controllers.delete(self);
          return { ...snapshot, status: 'done', output: event['output'] as TOutput, input: undefined };
        case REJECTED:
          controllers.delete(self);
          return { ...snapshot, status: 'error', error: event['error'], input: undefined };
        case STOP:
          controllers.get(self)?.abort();
          controllers.delete(self);
          return { ...snapshot, status: 'stopped', input: undefined };
        default:
          return snapshot;
      }
    },
    start: (snapshot, { self, system }) => {
      if (snapshot.status !== 'active') return;
      let pending: PromiseLike<TOutput>;
      try {
        pending = run(new PhaseCall(snapshot.input as TInput, self), system);
      } catch (error) {
        pending = Promise.reject(error);
      }
      Promise.resolve(pending).then(
        (output) => {
          if (self.getSnapshot().status === 'active') self.send({ type: RESOLVED, output });
        },
        (error: unknown) => {
          if (self.getSnapshot().status === 'active') self.send({ type: REJECTED, error });
        },
      );
    },
    getInitialSnapshot: (_, input) => ({ status: 'active', output: undefined, error: undefined, input }),
    getPersistedSnapshot: (snapshot) => snapshot,
    restoreSnapshot: (snapshot) => snapshot as PromiseSnapshot<TOutput, TInput>,
  };
}

/**
 * The agent machine with phases that dispatch to the runtime bound to each run.
 *
 * @example
 * ```ts
 * const actor = createActor(sharedAgentMachine, { input });
 * bindRuntime(actor, runtime);
 * actor.start();
 * ```
 */
export const sharedAgentMachine = agentMachine.provide({
  actors: {
    reason: fromPhase<ReasonOutput, ReasonInput>((call, system) => runtimeOf(system).reason(call)),
    hydrate: fromPhase<HydrateOutput, HydrateInput>((call, system) => {
      const hydrate = runtimeOf(system).hydrate;
      return hydrate === undefined ? Promise.resolve(NOTHING_TO_INJECT) : hydrate(call);
    }),
    gate: fromPhase<GateOutput, GateInput>((call, system) => runtimeOf(system).gate(call)),
    act: fromPhase<ActOutput, ActInput>((call, system) => runtimeOf(system).act(call)),
  },
});

/**
 * Bind a run's actor (created from {@link sharedAgentMachine}) to its agent's runtime. Call it
 * before `actor.start()`; the binding lives as long as the actor's system.
 *
 * @example
 * ```ts
 * bindRuntime(createActor(sharedAgentMachine, { input }), runtime).start();
 * ```
 */
export function bindRuntime<TActor extends { readonly system: ActorSystemOf }>(actor: TActor, runtime: AgentRuntime): TActor {
  return runtimes.bind(actor, runtime);
}
