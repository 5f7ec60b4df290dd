/**
 * `agent.session(id)`: a conversation that goes on across runs and processes. Each run starts
 * from the session's history and, when it ends with an answer, appends what it added (the
 * task, the model's turns, the tool results). Tools of a session run read and write its memory
 * through `ctx.session`.
 */
import type { Message } from '../core/messages.ts';
import type { LoopResult } from '../core/run.ts';
import type { SessionHandle, SessionMemory, SessionStore } from '../sessions/index.ts';
import type { AgentRun, RunOptions, Session } from './types.ts';

/** The namespace of the session memory tools see as `ctx.session`. */
export const TOOL_NAMESPACE = 'tools';

/** What a session needs of its agent. */
export interface SessionHost {
  readonly store: SessionStore;
  /** The system prompt the agent's runs begin with (not stored in the session). */
  readonly hasSystem: boolean;
  start(message: string, options: RunOptions, memory: SessionMemory): AgentRun;
}

/**
 * @example
 * ```ts
 * const session = await openSession(host, 'support-42');
 * ```
 */
export async function openSession(host: SessionHost, id: string): Promise<Session> {
  const handle = await host.store.open(id);
  const toolMemory = handle.memory(TOOL_NAMESPACE);
  // One run at a time: a second run would start from history the first has not appended yet.
  let running: Promise<unknown> = Promise.resolve();
  return {
    id: handle.id,
    run(message, options = {}) {
      const turn = running.then(() => runTurn(host, handle, toolMemory, message, options));
      running = turn.catch(() => undefined);
      return turn;
    },
    history: () => handle.messages(),
    memory: (namespace) => handle.memory(namespace),
    close: () => running.then(() => handle.close()),
  };
}

async function runTurn(host: SessionHost, handle: SessionHandle, memory: SessionMemory, message: string, options: Omit<RunOptions, 'history'>): Promise<LoopResult> {
  const history = handle.messages();
  const run = host.start(message, { ...options, history }, memory);
  const result = await run.settled;
  // Only a finished exchange is kept: a failed run's conversation may end mid-turn (calls without results).
  if (result.status === 'done') await handle.appendTurn({ runId: result.runId, messages: added(result.messages, history.length, host.hasSystem) });
  return run.result;
}

/** What a run added to the history it started from: not the system prompt, nor what was injected as system text. */
function added(messages: readonly Message[], historyLength: number, hasSystem: boolean): Message[] {
  return messages.slice((hasSystem ? 1 : 0) + historyLength).filter((message) => message.role !== 'system');
}
