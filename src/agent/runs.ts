import { createActor, type Actor, type Snapshot } from 'xstate';
import type { AgentMachineInput } from '../../machines/agent.types.ts';
import type { agentMachine } from '../../machines/agent.machine.ts';
import { ConfigurationError } from '../core/errors.ts';
import type { LoopEvent } from '../core/loopEvent.ts';
import { contentText, mediaParts, type Message } from '../core/messages.ts';
import { checkParts, taskContent, type TaskInput } from '../conversation/parts.ts';
import { assertMessages } from '../conversation/validate.ts';
import { storeMessageParts, storeParts, type BlobStore } from '../persistence/blobs.ts';
import type { RecoveredRun } from '../persistence/recover.ts';
import type { RunStore } from '../persistence/fileStore.ts';
import { newRunId, type RunInput, type RunOwner } from '../persistence/records.ts';
import type { BreakerRegistry } from '../resilience/breakerRegistry.ts';
import type { Redactor } from '../security/redactor.ts';
import type { SessionMemory } from '../sessions/index.ts';
import { createRunPersistence, type RunPersistence } from '../run/persistence.ts';
import type { RunContext } from '../run/context.ts';
import { rearmRunTimeout, restoreActor, restoredSnapshot } from './checkpoint.ts';
import type { AgentSettings } from './config.ts';
import { attachRun, type RunHost } from './runHandle.ts';
import type { AgentRun, PreparedRun, ResumeRunOptions, RunOptions } from './types.ts';
import { defined } from '../core/defined.ts';

export interface RunsDeps {
  readonly agentId: string;
  readonly settings: Pick<AgentSettings, 'model' | 'limits' | 'context' | 'observe'>;
  /** The composed, redacted system prompt of every run. */
  readonly system: string | undefined;
  readonly machine: typeof agentMachine;
  /** Read when a run begins: MCP servers' tools come and go. */
  readonly tools: { readonly names: readonly string[] };
  readonly redactor: Redactor;
  readonly store: RunStore | undefined;
  readonly breakers: BreakerRegistry | undefined;
  readonly blobs: () => BlobStore;
  readonly contexts: Map<string, RunContext>;
  readonly host: Omit<RunHost, 'agentId' | 'redactor' | 'runs' | 'sessionOf'>;
}

/** An agent's runs in this process: how each begins, and which are live. */
export interface Runs {
  start(task: TaskInput, options?: RunOptions, mode?: 'call'): AgentRun;
  prepare(task: TaskInput, options?: RunOptions): PreparedRun;
  resume(runId: string, options?: ResumeRunOptions): AgentRun;
  /** A session's turn: its tools share `memory` until it settles. */
  startTurn(message: string, options: RunOptions, memory: SessionMemory): AgentRun;
  /** Keep `handle` reachable (`find`, `stop`) until it settles. */
  track(handle: AgentRun): AgentRun;
  find(runId: string): AgentRun | undefined;
  record(runId: string, event: LoopEvent): boolean;
  stop(): void;
}

export function createRuns(deps: RunsDeps): Runs {
  const { agentId, settings, redactor, store, machine, contexts } = deps;
  const live = new Set<AgentRun>();
  const sessionRuns = new Map<string, SessionMemory>();
  const host: RunHost = { ...deps.host, agentId, redactor, runs: contexts, sessionOf: (runId) => sessionRuns.get(runId) };

  function launch(input: AgentMachineInput, persistence: RunPersistence | undefined, recovered?: RecoveredRun, tookOver?: RunOwner): AgentRun {
    const inspect = settings.observe.inspect;
    const create = (snapshot?: Record<string, unknown>) =>
      createActor(machine, { input, ...defined({ snapshot: snapshot as Snapshot<unknown>, inspect }) });
    const snapshot = recovered === undefined ? undefined : restoredSnapshot(recovered);
    const actor = snapshot === undefined ? create() : recovered?.checkpoint === undefined ? create(snapshot) : restoreActor(snapshot, create);
    const handle = attachRun(host, actor, input, persistence, recovered, tookOver);
    actor.start();
    if (recovered?.checkpoint !== undefined) rearmRunTimeout(actor);
    return handle;
  }

  function start(task: TaskInput, options: RunOptions = {}, mode?: 'call'): AgentRun {
    const { input, persistence } = begin(deps, task, options, mode);
    return followSignal(launch(input, persistence), options.signal);
  }

  function resume(runId: string, options: ResumeRunOptions = {}): AgentRun {
    if (store === undefined) throw new ConfigurationError('resume() needs a store: createAgent({ persistence: { store: createFileStore() } }).');
    // A live run holds its lock until its scope is gone: a second resume anywhere gets StoreError (`run_locked`).
    const { writer, recovered, tookOver } = store.resumeRun(runId, options.takeover === true ? { takeover: true } : {});
    for (const warning of recovered.warnings) console.warn(`[actorloop] ${warning}`);
    // Before any tool runs: breakers go on where the log left them, and the next checkpoint carries them.
    if (recovered.breakers !== undefined) {
      deps.breakers?.restore(recovered.breakers);
      writer.carryBreakers(recovered.breakers);
    }
    // A run killed before anything but its header was written starts over from its task.
    const context = (restoredSnapshot(recovered) as { context?: Partial<AgentMachineInput> } | undefined)?.context;
    const { agentId: owner, task } = recovered.meta;
    const input: AgentMachineInput = recovered.input
      ? { runId, agentId: owner, ...recovered.input }
      : { runId, agentId: owner, task, ...defined({ system: deps.system }), limits: settings.limits, model: modelOf(settings), toolNames: deps.tools.names, ...defined({ mode: context?.mode }) };
    return launch(input, createRunPersistence(writer, recovered.calls), recovered, tookOver);
  }

  function track(handle: AgentRun, after?: () => void): AgentRun {
    live.add(handle);
    void handle.settled.then(() => {
      live.delete(handle);
      after?.();
    });
    return handle;
  }

  return {
    start,
    resume,
    track,
    prepare(task, options = {}) {
      const { input, persistence } = begin(deps, task, options);
      return { runId: input.runId, logic: machine, input, attach: (actor: Actor<typeof agentMachine>) => track(attachRun(host, actor, input, persistence)) };
    },
    startTurn(message, options, memory) {
      const { input, persistence } = begin(deps, message, options);
      sessionRuns.set(input.runId, memory);
      return track(followSignal(launch(input, persistence), options.signal), () => sessionRuns.delete(input.runId));
    },
    find(runId) {
      for (const handle of live) if (handle.runId === runId) return handle;
      return undefined;
    },
    record(runId, event) {
      const run = contexts.get(runId);
      run?.emit(event);
      return run !== undefined;
    },
    stop() {
      // A run already in a final state is only settling (persisting, remembering).
      for (const handle of live) if (handle.actor.getSnapshot().status === 'active') handle.cancel('agent stopped');
      deps.breakers?.stopAll();
    },
  };
}

const modelOf = ({ model }: RunsDeps['settings']): string => model.name ?? model.provider.defaultModel;

/** A new run's machine input, its task checked and its parts stored; its log is created when there is a store. */
function begin(deps: RunsDeps, task: TaskInput, options: RunOptions, mode?: 'call'): { input: AgentMachineInput; persistence: RunPersistence | undefined } {
  const { agentId, settings, redactor, store, blobs, contexts } = deps;
  const content = typeof task === 'string' || Array.isArray(task) ? taskContent(task) : undefined;
  if (content === undefined || (contentText(content).trim() === '' && (typeof content === 'string' || mediaParts(content) === 0))) {
    throw new ConfigurationError('A run needs a non-empty task: a string, or an array of text and parts (image(...), file(...)).');
  }
  const given = options.runId;
  if (given !== undefined && contexts.has(given)) throw new ConfigurationError(`Run ${given} is already in progress on agent ${agentId}.`);
  const limits = { vision: settings.model.vision, ...settings.context.content };
  if (typeof content !== 'string') checkParts(content, limits);
  // A malformed message is refused here, naming it, rather than passed to the model or misread as a part.
  if (options.history !== undefined) checkParts(partsOf(assertMessages(options.history)), limits);
  // Bytes go to the blob store before anything copies the conversation: it carries references from here on.
  const parts = typeof content === 'string' ? undefined : storeParts(content, blobs());
  const history = options.history === undefined ? undefined : storeMessageParts(options.history, blobs());
  const cleanTask = redactor.text(contentText(content));
  const run: RunInput = {
    task: cleanTask,
    ...(parts === undefined ? {} : { content: redactor.deep(parts) }),
    ...defined({ system: deps.system }),
    ...(history === undefined ? {} : { history: redactor.deep(history) }),
    // A single call is a run of one model call, offered no tools.
    limits: mode === 'call' ? { ...settings.limits, ...options.limits, maxIterations: 1 } : { ...settings.limits, ...options.limits },
    model: modelOf(settings),
    toolNames: mode === 'call' ? [] : [...deps.tools.names],
    ...defined({ mode }),
  };
  // Without an id of the caller's, the store picks one (and can skip checks a given id needs).
  const writer = store?.createRun({ ...defined({ runId: given }), agentId, task: cleanTask, input: run });
  const runId = writer?.runId ?? given ?? newRunId();
  return { input: { runId, agentId, ...run }, persistence: writer === undefined ? undefined : createRunPersistence(writer) };
}

const partsOf = (messages: readonly Message[]) =>
  messages.flatMap((message) => (message.role === 'user' && typeof message.content !== 'string' ? message.content : message.role === 'tool' ? (message.parts ?? []) : []));

/** Cancel the run when `signal` aborts (at once if it has); the listener goes when the run ends. */
export function followSignal(handle: AgentRun, signal: AbortSignal | undefined): AgentRun {
  if (signal === undefined) return handle;
  const cancel = (): void => handle.cancel(`the run's signal was aborted${signal.reason instanceof Error ? `: ${signal.reason.message}` : ''}`);
  if (signal.aborted) {
    cancel();
    return handle;
  }
  signal.addEventListener('abort', cancel, { once: true });
  void handle.settled.then(() => signal.removeEventListener('abort', cancel));
  return handle;
}
