/**
 * `subAgentMachine` provided for one kind of parent (strategy branches, system tasks): how a
 * request becomes a prepared agent run, and how the settled run becomes the parent's answer.
 * The bookkeeping between the machine's three steps — prepare, attach, conclude — lives here once.
 */
import { fromPromise } from 'xstate';
import { subAgentMachine, type SubAgentConclude, type SubAgentPrepared, type SubAgentRequest } from '../../machines/subAgent.machine.ts';
import type { LoopResult } from '../core/run.ts';
import type { AgentRun, PreparedRun } from './types.ts';

/** One request's run, as the parent set it up. */
export interface SubAgentRun {
  readonly prepared: PreparedRun;
  /** Called with the run's handle once its actor is hooked up (before it starts). */
  attached?(run: AgentRun): void;
  /** The parent's answer from the settled run (also called for a run stopped with its parent). */
  conclude(result: LoopResult): unknown;
}

/**
 * @example
 * ```ts
 * const branch = subAgentLogic((request) => {
 *   const prepared = agent.prepare(promptOf(request));
 *   return { prepared, conclude: (result) => thoughtOf(request, result) };
 * });
 * ```
 */
export function subAgentLogic(start: (request: SubAgentRequest) => SubAgentRun) {
  const runs = new Map<string, { readonly run: SubAgentRun; outcome?: Promise<unknown> }>();
  return subAgentMachine.provide({
    actors: {
      prepare: fromPromise<SubAgentPrepared, SubAgentRequest>(async ({ input }) => {
        const run = start(input);
        const { runId, logic } = run.prepared;
        runs.set(runId, { run });
        return { runId, logic, input: run.prepared.input };
      }),
      conclude: fromPromise<unknown, SubAgentConclude>(async ({ input }) => {
        const outcome = runs.get(input.runId)?.outcome;
        runs.delete(input.runId);
        if (outcome === undefined) throw new Error(`Sub-agent run ${input.runId} was never attached to its actor.`);
        return outcome;
      }),
    },
    actions: {
      attach: (_, { runId, actor }) => {
        const entry = runs.get(runId);
        if (entry === undefined) throw new Error(`Sub-agent run ${runId} was not prepared.`);
        const handle = entry.run.prepared.attach(actor as AgentRun['actor']);
        entry.run.attached?.(handle);
        entry.outcome = handle.settled.then((result) => {
          // Stopped with its parent: no conclude will come for it.
          if (handle.actor.getSnapshot().status === 'stopped') runs.delete(runId);
          return entry.run.conclude(result);
        });
      },
    },
  });
}
