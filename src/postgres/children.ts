/**
 * A durable agent's runs prepared by a parent in a worker's step (a strategy's branches): each is
 * a durable run of its own, on its own queue, that the parent waits for. Its outcome comes back
 * as the parent's effect `child:<runId>` when it ends (its last step settles it and wakes the
 * parent). In the parent's actor tree it is a promise actor standing for the run.
 */
import { EMPTY } from 'rxjs';
import { fromPromise } from 'xstate';
import { ConfigurationError } from '../core/errors.ts';
import type { LoopResult } from '../core/run.ts';
import type { AgentRun, PreparedRun, RunOptions } from '../agent/types.ts';
import { newRunId } from '../persistence/records.ts';
import { frames } from './durable.ts';

export function durablePrepare(agentId: string, redact: <T>(value: T) => T) {
  return (task: string, options: RunOptions = {}): PreparedRun => {
    const frame = frames.getStore();
    if (frame === undefined) {
      throw new ConfigurationError(`A durable agent's runs are prepared by a durable parent (a strategy defined with runtime.strategy()) inside a worker; agent ${agentId} was asked outside one.`);
    }
    const runId = options.runId ?? newRunId();
    const outcome = frame.step.effect(`child:${runId}`, () => ({ kind: 'child', agentId, runId, task: redact(task), parentId: frame.runId }), undefined) as Promise<LoopResult>;
    const logic = fromPromise<LoopResult>(() => outcome);
    let status = 'running';
    const settled = outcome.then((result) => {
      status = result.status;
      return result;
    });
    return {
      runId,
      // The parent spawns a promise actor for the run, not the loop: the loop runs in whichever worker takes the run.
      logic: logic as unknown as PreparedRun['logic'],
      input: { runId, agentId, task, limits: { maxIterations: 0, maxTotalTokens: 0, timeoutMs: 0, maxRepairTurns: 0 }, model: '', toolNames: [] },
      attach: (actor): AgentRun => ({
        runId,
        actor,
        events$: EMPTY,
        settled,
        result: settled.then((result) => (result.status === 'done' ? result : Promise.reject(new Error(result.error?.message ?? result.reason)))),
        cancel: () => actor.stop(),
        approve: () => {
          throw new ConfigurationError(`Run ${runId} is durable: it is approved through its own runtime, not its parent.`);
        },
        reject: () => {
          throw new ConfigurationError(`Run ${runId} is durable: it is rejected through its own runtime, not its parent.`);
        },
        phase: () => status,
      }),
    };
  };
}
