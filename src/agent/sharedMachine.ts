/**
 * One provided agent machine for the whole process. `agentMachine.provide()` builds a new
 * machine — its state-node tree plus the caches XState fills on first use, about 22 KB — so
 * providing per agent made a thousand agents pay that a thousand times and run their first
 * iterations on cold caches (measured: 1 000 separate agents took 1.4× the wall time of 1 000
 * runs of one agent). Instead every run's actor is bound to its agent's runtime through the
 * run's actor system, which every child actor of the run shares.
 */
import { fromPromise, type AnyActorRef } from 'xstate';
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

/** What a phase implementation receives (the subset of XState's promise-actor arguments actorloop uses). */
export interface PhaseArgs<TInput> {
  readonly input: TInput;
  readonly signal: AbortSignal;
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

/** XState's actor system type (not exported by name): one per root actor, shared by its children. */
type ActorSystemOf = AnyActorRef['system'];

const runtimes = new WeakMap<ActorSystemOf, AgentRuntime>();

function runtimeOf(system: ActorSystemOf): AgentRuntime {
  const runtime = runtimes.get(system);
  if (runtime === undefined) {
    throw new Error('This agent-machine actor has no runtime: start runs with createAgent(), or bind one with bindRuntime(actor, runtime) before actor.start().');
  }
  return runtime;
}

const NOTHING_TO_INJECT: HydrateOutput = Object.freeze({ inject: Object.freeze([]) });

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
    reason: fromPromise<ReasonOutput, ReasonInput>(({ input, signal, system }) => runtimeOf(system).reason({ input, signal })),
    hydrate: fromPromise<HydrateOutput, HydrateInput>(({ input, signal, system }) => {
      const hydrate = runtimeOf(system).hydrate;
      return hydrate === undefined ? Promise.resolve(NOTHING_TO_INJECT) : hydrate({ input, signal });
    }),
    gate: fromPromise<GateOutput, GateInput>(({ input, signal, system }) => runtimeOf(system).gate({ input, signal })),
    act: fromPromise<ActOutput, ActInput>(({ input, signal, system }) => runtimeOf(system).act({ input, signal })),
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
  runtimes.set(actor.system, runtime);
  return actor;
}
