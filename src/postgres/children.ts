/**
 * A durable agent's run prepared by a parent is a durable run of its own: in a step its outcome comes
 * back as the parent's effect `child:<runId>`; elsewhere it is queued like `agent.run()`.
 */
import { createHash } from 'node:crypto';
import { EMPTY } from 'rxjs';
import { fromPromise } from 'xstate';
import { ConfigurationError } from '../core/errors.ts';
import type { LoopResult } from '../core/run.ts';
import type { AgentRun, DurableTask, PreparedRun, RunOptions } from '../agent/types.ts';
import { contentText } from '../core/messages.ts';
import { newRunId } from '../persistence/records.ts';
import { calls, frames } from './durable.ts';
import { failureResult } from './handle.ts';

export function durablePrepare(
  agentId: string,
  redact: <T>(value: T) => T,
  /** `join`: a run of that id that exists already is the one to wait for. */
  submit: (task: DurableTask, options: RunOptions, join: boolean) => Promise<LoopResult>,
  cancel: (runId: string, reason: string) => Promise<void>,
) {
  return (task: DurableTask, options: RunOptions = {}): PreparedRun => {
    const frame = frames.getStore();
    const text = typeof task === 'string' ? task : contentText(task);
    // A parent's effect is replayed from its log, which keeps a sub-agent's task as text.
    if (frame !== undefined && typeof task !== 'string' && task.some((part) => part.type !== 'text')) {
      throw new ConfigurationError('A sub-agent run asked for by a durable run takes a text task: describe the image or file, or pass it to the parent run.');
    }
    // A run a worker's tool call starts is named after the call: the call made again after its
    // worker died finds that run instead of starting a second one.
    const call = frame === undefined ? calls.getStore() : undefined;
    const runId = call === undefined ? (options.runId ?? newRunId()) : options.runId !== undefined && call.named.delete(options.runId) ? options.runId : runIdOf(call.key, call.started++);
    // Outside any durable run the run is queued now, and stopping its actor cancels it; a durable
    // parent asks for it as one of its effects.
    const outcome: Promise<LoopResult> =
      frame === undefined
        ? submit(task, { ...options, runId }, call !== undefined).catch((error: unknown) => failureResult(error, runId, agentId))
        : (frame.step.effect(`child:${runId}`, () => ({ kind: 'child', agentId, runId, task: redact(text), parentId: frame.runId }), undefined) as Promise<LoopResult>);
    const logic = fromPromise<LoopResult>(({ signal }) => {
      if (frame === undefined) signal.addEventListener('abort', () => void cancel(runId, 'its parent stopped it').catch(() => undefined), { once: true });
      return outcome;
    });
    let status = 'running';
    const settled = outcome.then((result) => {
      status = result.status;
      return result;
    });
    return {
      runId,
      // The loop runs in whichever worker takes the run: the parent spawns a promise actor for it.
      logic: logic as unknown as PreparedRun['logic'],
      input: { runId, agentId, task: text, limits: { maxIterations: 0, maxTotalTokens: 0, timeoutMs: 0, maxRepairTurns: 0 }, model: '', toolNames: [] },
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

/** The id of the next run a worker's tool call starts, given out before the run is asked for; undefined outside one. */
export function nextCallRunId(): string | undefined {
  const call = frames.getStore() === undefined ? calls.getStore() : undefined;
  if (call === undefined) return undefined;
  const runId = runIdOf(call.key, call.started++);
  call.named.add(runId);
  return runId;
}

function runIdOf(callKey: string, n: number): string {
  return `run_${createHash('sha256').update(`${callKey}#${n}`).digest('hex').slice(0, 40)}`;
}
