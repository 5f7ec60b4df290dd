/** `subAgentMachine` provided for one kind of parent: the prepare, attach, conclude bookkeeping lives here once. */
import { createActor, fromPromise } from 'xstate';
import { subAgentMachine, type SubAgentConclude, type SubAgentPrepared, type SubAgentRequest } from '../../machines/subAgent.machine.ts';
import type { LoopResult } from '../core/run.ts';
import type { AgentRun, PreparedRun } from './types.ts';

export interface SubAgentRun {
  readonly prepared: PreparedRun;
  attached?(run: AgentRun): void;
  /** The parent's answer from the settled run (also called for a run stopped with its parent). */
  conclude(result: LoopResult): unknown;
}

export function subAgentLogic(start: (request: SubAgentRequest) => SubAgentRun) {
  const runs = new Map<string, { readonly run: SubAgentRun; outcome?: Promise<unknown> }>();
  const discard = (runId: string): void => {
    const entry = runs.get(runId);
    if (entry === undefined || entry.outcome !== undefined) return;
    runs.delete(runId);
    const { prepared } = entry.run;
    const actor = createActor(prepared.logic, { input: prepared.input });
    const handle = prepared.attach(actor);
    actor.start();
    actor.stop();
    void handle.settled.then((result) => entry.run.conclude(result));
  };
  return subAgentMachine.provide({
    actors: {
      prepare: fromPromise<SubAgentPrepared, SubAgentRequest>(async ({ input, signal }) => {
        const run = start(input);
        const { runId, logic } = run.prepared;
        runs.set(runId, { run });
        // Stopped before its run was spawned (the parent cancelled as the branch began): the prepared
        // run, its log and its agent would be left open for good, so it ends as cancelled like a started one.
        signal.addEventListener('abort', () => discard(runId), { once: true });
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
