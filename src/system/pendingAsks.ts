/**
 * The asks waiting for an answer, and how each host report settles them. Every ask is settled
 * exactly once — by its answer, its timeout, its caller's abort or its agent being stopped —
 * and a settled ask leaves no listener behind.
 */
import type { HostTask, TaskReport } from '../../machines/agentHost.machine.ts';
import type { AgentRun } from '../agent/createAgent.ts';
import { errorForResult } from '../agent/errors.ts';
import type { LoopResult } from '../core/run.ts';
import { AgentSystemError } from './errors.ts';

interface PendingAsk {
  readonly to: string;
  readonly task: HostTask;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  resolve(result: LoopResult): void;
  reject(error: unknown): void;
  /** Removes the caller's abort listener. */
  release(): void;
}

/**
 * @example
 * ```ts
 * const asks = createPendingAsks((runId) => liveRuns.get(runId));
 * const answer = asks.add('writer', task, 5_000, signal, () => host.send({ type: 'agent.cancel', taskId: task.taskId }));
 * root.on('reply.received', ({ report }) => asks.onReport(report));
 * ```
 */
export interface PendingAsks {
  /** Register an ask before its task is sent; `onAbort` runs when the caller's signal aborts. */
  add(to: string, task: HostTask, timeoutMs: number, signal: AbortSignal | undefined, onAbort: (reason: unknown) => void): Promise<LoopResult>;
  /** Settle the ask a reply answers (replies to asks already settled are ignored). */
  onReport(report: TaskReport): void;
  /** Reject every ask addressed to one of `agentIds` with AgentSystemError (agent_stopped). */
  rejectFor(agentIds: ReadonlySet<string>): void;
}

/**
 * Create the registry of one system's asks.
 *
 * @example
 * ```ts
 * const asks = createPendingAsks((runId) => liveRuns.get(runId));
 * ```
 *
 * @param liveRun finds a task's run while it is still winding down, so a timeout or abort can
 *   reject only once the run has really ended (and carry its cancelled result).
 */
export function createPendingAsks(liveRun: (runId: string) => AgentRun | undefined): PendingAsks {
  const pending = new Map<string, PendingAsk>();

  const take = (taskId: string): PendingAsk | undefined => {
    const ask = pending.get(taskId);
    if (ask === undefined) return undefined;
    pending.delete(taskId);
    ask.release();
    return ask;
  };

  /** Reject after the task's run (if it started) has ended, with an error built from its result. */
  const rejectAfterRun = (ask: PendingAsk, started: boolean, makeError: (result: LoopResult | undefined) => unknown): void => {
    const run = started ? liveRun(ask.task.runId) : undefined;
    if (run === undefined) {
      ask.reject(makeError(undefined));
      return;
    }
    void run.settled.then((result) => ask.reject(makeError(result)));
  };

  return {
    add(to, task, timeoutMs, signal, onAbort) {
      return new Promise<LoopResult>((resolve, reject) => {
        const abort = () => onAbort(signal?.reason);
        signal?.addEventListener('abort', abort, { once: true });
        pending.set(task.taskId, {
          to,
          task,
          timeoutMs,
          signal,
          resolve,
          reject,
          release: () => signal?.removeEventListener('abort', abort),
        });
      });
    },
    onReport(report) {
      const ask = take(report.task.taskId);
      if (ask === undefined) return;
      switch (report.type) {
        case 'task.done':
          if (report.result.status === 'done') ask.resolve(report.result);
          else ask.reject(errorForResult(report.result));
          return;
        case 'task.failed':
          ask.reject(report.error);
          return;
        case 'task.timedOut':
          rejectAfterRun(ask, report.started, (result) =>
            AgentSystemError.askTimeout({
              agentId: ask.to,
              timeoutMs: ask.timeoutMs,
              correlationId: ask.task.taskId,
              runId: ask.task.runId,
              ...(result === undefined ? {} : { result }),
            }),
          );
          return;
        case 'task.cancelled':
          // The caller's own abort gets its own reason back, as with fetch; a cancel sent to the
          // host by anyone else gets the run's RunCancelledError (or AgentSystemError (ask_cancelled) if queued).
          rejectAfterRun(ask, report.started, (result) => {
            if (ask.signal?.aborted === true) return ask.signal.reason;
            if (result !== undefined) return errorForResult(result);
            return AgentSystemError.askCancelled(ask.to, report.reason, { runId: ask.task.runId });
          });
          return;
      }
    },
    rejectFor(agentIds) {
      for (const [taskId, ask] of [...pending]) {
        if (!agentIds.has(ask.to)) continue;
        take(taskId);
        ask.reject(AgentSystemError.stopped(ask.to, { runId: ask.task.runId }));
      }
    },
  };
}
