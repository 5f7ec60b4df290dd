/**
 * One provided agent machine for the whole process. `agentMachine.provide()` builds a new
 * machine — its state-node tree plus the caches XState fills on first use — so providing per
 * agent made a thousand agents pay that a thousand times and run their first iterations on cold
 * caches (bench/RESULTS.md compares separate agents with runs of one). Instead every run's actor is bound to its agent's runtime through the
 * run's actor system, which every child actor of the run shares.
 */
import { agentMachine } from '../../machines/agent.machine.ts';
import { phase, phaseRunnerFor, type Phase, type PhaseArgs, type PhaseImplementations } from '../../machines/phaseRunner.ts';
import { systemBinding, type ActorSystemOf } from './systemBinding.ts';

export { phase };
export type { Phase, PhaseArgs };

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
export type AgentRuntime = PhaseImplementations;

const runtimes = systemBinding<AgentRuntime>(
  'This agent-machine actor has no runtime: start runs with createAgent(), or bind one with bindRuntime(actor, runtime) before actor.start().',
);

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
  actors: { phases: phaseRunnerFor((system: ActorSystemOf) => runtimes.of(system)) },
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
