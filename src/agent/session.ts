/** A session's runs start from its history; a finished one appends what it added. A durable agent's runtime keeps the memory instead. */
import type { Message } from '../core/messages.ts';
import type { LoopResult } from '../core/run.ts';
import { createMemorySessionStore, openSessionStore, type SessionHandle, type SessionMemory, type SessionStore } from '../sessions/index.ts';
import type { Redactor } from '../security/redactor.ts';
import type { Runs } from './runs.ts';
import type { AgentRun, BoundRuntime, RunOptions, Session, SharedSessionMemory } from './types.ts';

export const TOOL_NAMESPACE = 'tools';

export interface SessionHost {
  readonly store: SessionStore;
  readonly hasSystem: boolean;
  sharedMemory?(sessionId: string): Promise<SharedSessionMemory>;
  start(message: string, options: RunOptions, memory: SessionMemory, sessionId: string): AgentRun;
}

interface SessionDeps {
  readonly redactor: Redactor;
  readonly hasSystem: boolean;
  readonly runs: Pick<Runs, 'startTurn'>;
  readonly durable: BoundRuntime | undefined;
}

/** An agent's sessions, kept where `memory.sessions` says (in memory by default, made on first use). */
export function agentSessions(config: SessionStore | { readonly dir?: string } | undefined, deps: SessionDeps): { open(id: string): Promise<Session> } {
  const { redactor, durable } = deps;
  const configured = config === undefined || isSessionStore(config) ? config : openSessionStore({ ...config, redact: redactor });
  let inMemory: SessionStore | undefined;
  const host: SessionHost = {
    get store() {
      return configured ?? (inMemory ??= createMemorySessionStore({ redact: redactor }));
    },
    hasSystem: deps.hasSystem,
    ...(durable === undefined ? {} : { sharedMemory: (sessionId: string) => durable.sessionMemory(sessionId) }),
    start(message, options, memory, sessionId) {
      // A durable run's tools run in workers: they find the session's memory by the session's id.
      return durable === undefined ? deps.runs.startTurn(message, options, memory) : durable.start(message, options, undefined, sessionId);
    },
  };
  return { open: (id) => openSession(host, id) };
}

const isSessionStore = (value: SessionStore | { readonly dir?: string }): value is SessionStore => typeof (value as { open?: unknown }).open === 'function';

export async function openSession(host: SessionHost, id: string): Promise<Session> {
  const handle = await host.store.open(id);
  let shared: SharedSessionMemory | undefined;
  try {
    shared = await host.sharedMemory?.(handle.id);
  } catch (error) {
    await handle.close();
    throw error;
  }
  const memoryOf = (namespace: string): SessionMemory => shared?.memory(namespace) ?? handle.memory(namespace);
  const toolMemory = memoryOf(TOOL_NAMESPACE);
  // One run at a time: a second run would start from history the first has not appended yet.
  let running: Promise<unknown> = Promise.resolve();
  return {
    id: handle.id,
    run(message, options = {}) {
      const turn = running.then(() => runTurn(host, handle, toolMemory, message, options, shared));
      running = turn.catch(() => undefined);
      return turn;
    },
    history: () => handle.messages(),
    memory: memoryOf,
    close: () =>
      running.then(() => {
        shared?.close();
        return handle.close();
      }),
  };
}

async function runTurn(
  host: SessionHost,
  handle: SessionHandle,
  memory: SessionMemory,
  message: string,
  options: Omit<RunOptions, 'history'>,
  shared: SharedSessionMemory | undefined,
): Promise<LoopResult> {
  const history = handle.messages();
  const run = host.start(message, { ...options, history }, memory, handle.id);
  const result = await run.settled;
  // Only a finished exchange is kept: a failed run's conversation may end mid-turn (calls without results).
  if (result.status === 'done') await handle.appendTurn({ runId: result.runId, messages: added(result.messages, history.length, host.hasSystem) });
  // Its tools wrote the memory elsewhere (in workers): read what they left.
  await shared?.refresh().catch((error: unknown) => {
    console.warn(`[actorloop] session ${handle.id}: its memory could not be read again after run ${result.runId} (${error instanceof Error ? error.message : String(error)}); session.memory() shows it as it was before the run.`);
  });
  return run.result;
}

/** What a run added to its history: not the system prompt, nor what was injected as system text. */
function added(messages: readonly Message[], historyLength: number, hasSystem: boolean): Message[] {
  return messages.slice((hasSystem ? 1 : 0) + historyLength).filter((message) => message.role !== 'system');
}
