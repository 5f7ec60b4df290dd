// Every ask is settled exactly once (answer, timeout, abort or stopped agent) and leaves no listener behind.
import type { HostTask, TaskReport } from '../../machines/agentHost.machine.ts';
import type { AgentRun } from '../agent/createAgent.ts';
import { errorForResult } from '../agent/errors.ts';
import type { LoopResult } from '../core/run.ts';
import { AgentSystemError } from './errors.ts';
import { defined } from '../core/defined.ts';

interface PendingAsk {
  readonly to: string;
  readonly task: HostTask;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  resolve(result: LoopResult): void;
  reject(error: unknown): void;
  release(): void;
}

export interface PendingAsks {
  add(to: string, task: HostTask, timeoutMs: number, signal: AbortSignal | undefined, onAbort: (reason: unknown) => void): Promise<LoopResult>;
  onReport(report: TaskReport): void;
  rejectFor(agentIds: ReadonlySet<string>): void;
}

/** `liveRun` lets a timeout or abort reject only once the run has really ended, carrying its cancelled result. */
export function createPendingAsks(liveRun: (runId: string) => AgentRun | undefined): PendingAsks {
  const pending = new Map<string, PendingAsk>();

  const take = (taskId: string): PendingAsk | undefined => {
    const ask = pending.get(taskId);
    if (ask === undefined) return undefined;
    pending.delete(taskId);
    ask.release();
    return ask;
  };

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
              ...defined({ result }),
            }),
          );
          return;
        case 'task.cancelled':
          // The caller's own abort gets its own reason back, as with fetch.
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
