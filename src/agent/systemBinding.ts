/**
 * Per-run implementations for machines provided once per process. `machine.provide()` builds a
 * new machine (its state-node tree and the caches XState fills on first use), so a machine
 * provided per run makes every run pay for that. Instead, one provided machine's actors look up
 * their run's implementation through the run's actor system, which the root actor and every
 * child of one run share.
 */
import type { AnyActorRef } from 'xstate';

/** XState's actor system type (not exported by name): one per root actor, shared by its children. */
export type ActorSystemOf = AnyActorRef['system'];

export interface SystemBinding<TRuntime> {
  /** Bind a run's root actor to its runtime; call before `actor.start()`. Returns the actor. */
  bind<TActor extends { readonly system: ActorSystemOf }>(actor: TActor, runtime: TRuntime): TActor;
  /** The runtime bound to the run that `system` belongs to; throws `unbound` when there is none. */
  of(system: ActorSystemOf): TRuntime;
}

/**
 * @example
 * ```ts
 * const runs = systemBinding<{ work(): Promise<string> }>('This actor has no runtime.');
 * const machine = base.provide({ actors: { work: fromPromise(({ system }) => runs.of(system).work()) } });
 * runs.bind(createActor(machine), { work: async () => 'done' }).start();
 * ```
 */
export function systemBinding<TRuntime>(unbound: string): SystemBinding<TRuntime> {
  const runtimes = new WeakMap<ActorSystemOf, TRuntime>();
  return {
    bind(actor, runtime) {
      runtimes.set(actor.system, runtime);
      return actor;
    },
    of(system) {
      const runtime = runtimes.get(system);
      if (runtime === undefined) throw new Error(unbound);
      return runtime;
    },
  };
}
