// A decision reaches a run whoever started it: one held here, a durable one through its runtime, or one
// waiting in a file store, which this process resumes (as `actorloop approve` does) and then decides.
import { waitFor } from 'xstate';
import type { Agent, AgentRun } from '../agent/types.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
import type { RunStore } from '../persistence/fileStore.ts';
import { isFinalStatus, RUN_ID_PATTERN } from '../persistence/records.ts';
import { WebRequestError } from './errors.ts';
import type { RunAgents } from './runTree.ts';
import { StoreError } from '../persistence/errors.ts';
import { defined } from '../core/defined.ts';

/** `createPostgresRuntime()` has all of it. */
export interface DurableRuns {
  getRun(runId: string): Promise<{ readonly status: string } | null>;
  journal(runId: string, options?: { readonly after?: number }): Promise<readonly JournalEntry[]>;
  approve(runId: string, toolCallIds?: readonly string[]): Promise<void>;
  reject(runId: string, reason?: string, toolCallIds?: readonly string[]): Promise<void>;
  cancel(runId: string, reason?: string): Promise<void>;
}

export interface DecidableRun {
  waiting(): Promise<readonly string[] | null>;
  state(): string;
  approve(toolCallIds: readonly string[] | undefined): Promise<void>;
  reject(reason: string | undefined, toolCallIds: readonly string[] | undefined): Promise<void>;
  cancel(reason: string): Promise<void>;
  /** Set when deciding it made this process hold it (a stored run it resumed). */
  readonly resumed?: AgentRun;
  /** The run's machine, when it runs in this process (a server's question is answered through it). */
  readonly handle?: AgentRun;
}

export interface DecisionSources {
  readonly agent: Agent;
  held(runId: string): AgentRun | undefined;
  readonly store?: RunStore;
  readonly runtime?: DurableRuns;
  /** The agent system the served agent delegates in: decisions reach its sub-runs too. */
  readonly system?: RunAgents;
  readonly resumeTimeoutMs: number;
}

/** A followed durable run's actor stands for the run too. */
export const isLive = (handle: AgentRun): boolean => handle.actor.getSnapshot().status === 'active';

export async function decidable(sources: DecisionSources, runId: string, action: string): Promise<DecidableRun> {
  const { agent, runtime, store } = sources;
  // A durable run is decided in its database, whichever process started it: its workers act on it.
  const row = runtime === undefined ? null : await runtime.getRun(runId);
  if (runtime !== undefined && row !== null) {
    if (isFinalStatus(row.status)) throw ended(runId, row.status, action);
    return durableRun(runtime, runId, row.status);
  }
  // A run the served agent delegated to is decided where it runs: its own agent in the system.
  const handle = sources.held(runId) ?? agent.handle(runId) ?? sources.system?.list().find((member) => member.agent.handle(runId) !== undefined)?.agent.handle(runId);
  if (handle !== undefined) {
    if (!isLive(handle)) throw ended(runId, handle.phase(), action);
    return heldRun(handle);
  }
  // A run id the store cannot name a file by is no run of it.
  if (store !== undefined && RUN_ID_PATTERN.test(runId)) {
    const meta = await store.getRun(runId);
    if (meta !== null) return storedRun(sources, store, runId, meta.status, action);
  }
  const last = agent.journal.last(runId);
  if (last !== undefined) throw ended(runId, last.event.type === 'run.terminated' ? last.event.reason : 'no longer in this process', action);
  throw new WebRequestError(
    404,
    `No run ${runId} is known here: start runs with a POST to the handler, or give the handler the agent's store (options.store) or durable runtime (options.runtime) to reach runs of other processes.`,
  );
}

const ended = (runId: string, how: string, action: string): WebRequestError => new WebRequestError(409, `Run ${runId} has ended (${how}): there is nothing to ${action}.`);

function heldRun(handle: AgentRun, resumed?: AgentRun): DecidableRun {
  return {
    // A durable run's handle has no machine context here: without its runtime, what waits is not known.
    waiting: async () => (handle.actor.getSnapshot().context as Partial<{ pending: { toolCallIds: readonly string[] } | null }> | undefined)?.pending?.toolCallIds ?? null,
    state: () => handle.phase(),
    approve: async (ids) => handle.approve(ids),
    reject: async (reason, ids) => handle.reject(reason, ids),
    cancel: async (reason) => handle.cancel(reason),
    handle,
    ...defined({ resumed }),
  };
}

function durableRun(runtime: DurableRuns, runId: string, status: string): DecidableRun {
  return {
    // The row says whether it waits; the journal's last wait not yet decided says for which calls.
    waiting: async () => (status === 'awaiting_human' ? waitingCalls(await runtime.journal(runId)) : null),
    state: () => status,
    approve: (ids) => runtime.approve(runId, ids),
    reject: (reason, ids) => runtime.reject(runId, reason, ids),
    cancel: (reason) => runtime.cancel(runId, reason),
  };
}

export function waitingCalls(entries: readonly JournalEntry[]): readonly string[] | null {
  let waiting: Set<string> | null = null;
  for (const { event } of entries) {
    if (event.type === 'human.awaiting') waiting = new Set(event.toolCallIds);
    else if (event.type === 'human.decided' && waiting !== null) {
      for (const id of event.toolCallIds) waiting.delete(id);
      if (waiting.size === 0) waiting = null;
    } else if (event.type === 'run.terminated') waiting = null;
  }
  return waiting === null ? null : [...waiting];
}

/** A stored run waiting for a human is resumed here (no model or tool called again) and goes on in this process. */
async function storedRun(sources: DecisionSources, store: RunStore, runId: string, status: string, action: string): Promise<DecidableRun> {
  if (isFinalStatus(status)) throw ended(runId, status, action);
  if (status !== 'awaiting_human') {
    throw new WebRequestError(409, `Run ${runId} is running in another process (status ${status}): ${action} it through that process's handler, or once it waits for a human.`);
  }
  let handle: AgentRun;
  try {
    handle = sources.agent.resume(runId);
  } catch (error) {
    if (error instanceof StoreError && error.code === 'run_locked') {
      throw new WebRequestError(409, `Run ${runId} waits in another process that still holds it: ${action} it through that process's handler.`, { cause: error });
    }
    if (error instanceof StoreError && error.code === 'run_finished') throw new WebRequestError(409, `Run ${runId} has ended: there is nothing to ${action}.`, { cause: error });
    throw error;
  }
  // Still replaying at the timeout: it is held here from now on, and a later decision finds it waiting.
  await waitFor(handle.actor, (s) => s.status !== 'active' || s.context.pending !== null, { timeout: sources.resumeTimeoutMs }).catch(() => undefined);
  return heldRun(handle, handle);
}
