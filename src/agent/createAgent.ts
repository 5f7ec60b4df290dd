/**
 * `createAgent`: the front door. An agent owns its tools, gate, breakers and event stream; each
 * `run`/`start` spawns one actor of the agent machine with the runtime's implementations.
 */
import { randomUUID } from 'node:crypto';
import { getEventListeners } from 'node:events';
import { createActor, type Actor, type Snapshot } from 'xstate';
import { concat, defer, filter, from } from 'rxjs';
import type { AgentContext, AgentEvent, AgentMachineInput, AgentOutput } from '../../machines/agent.types.ts';
import type { RunLimits } from '../core/run.ts';
import { agentMachine } from '../../machines/agent.machine.ts';
import { phaseRunner, type PhaseReply } from '../../machines/phaseRunner.ts';
import type { Message } from '../core/messages.ts';
import { DEFAULTS } from '../core/defaults.ts';
import { ConfigurationError } from '../core/errors.ts';
import { EventBus } from '../events/eventBus.ts';
import type { JournalEntry, LoopEvent } from '../core/loopEvent.ts';
import { MemoryJournal } from '../events/memoryJournal.ts';
import { createExecutor, type CallJournal, type Executor } from '../executor/executor.ts';
import type { RecoveredRun } from '../persistence/recover.ts';
import { newRunId, type RunInput, type RunOwner } from '../persistence/records.ts';
import { createRunPersistence, type RunPersistence } from './runPersistence.ts';
import { machineEventsIn, Replay } from './replay.ts';
import { agentPhases, type RunScope } from './runtime.ts';
import type { Hydrator, MessagePreparer } from '../core/hooks.ts';
import { createRedactor } from '../security/redactor.ts';
import { gates } from '../policy/gates.ts';
import { createBreakerRegistry, type BreakerRegistry } from '../resilience/breakerRegistry.ts';
import type { BreakerOptions } from '../resilience/circuitBreaker.ts';
import { createToolRegistry } from '../tools/registry.ts';
import { createStuckGuard } from '../progress/stuckGuard.ts';
import { createContextBudget } from '../context/index.ts';
import { applyToolProfile } from '../tools/profile.ts';
import { createKnowledge } from '../knowledge/wiring.ts';
import { createPreHydrator } from '../hydration/index.ts';
import { errorForResult } from './errors.ts';
import { isResumableFailure } from './result.ts';
import { resolveConfig, type AgentSettings } from './config.ts';
import type { LoopResult } from '../core/run.ts';

import type { Agent, AgentConfig, AgentRun, PreparedRun, ResumeRunOptions, RunOptions } from './types.ts';

type AgentActor = Actor<typeof agentMachine>;

export type { Agent, AgentConfig, AgentRun, ModelConfig, PreparedRun, ResumeRunOptions, RunOptions } from './types.ts';


/**
 * @example
 * ```ts
 * const agent = createAgent({ model: openAICompatible(), tools: [add], limits: { maxIterations: 10 } });
 * agent.events$.subscribe((e) => console.log(e.event.type));
 * const result = await agent.run('What is 6 * 7?');
 * ```
 */
/** Whether anything still listens to a phase's signal: if not, the next phase may reuse it. */
const listening = (signal: AbortSignal): boolean => getEventListeners(signal, 'abort').length > 0;

export function createAgent(config: AgentConfig): Agent {
  // Checked and flattened at the edge: everything below reads `settings`, never `config`.
  const settings = resolveConfig(config);
  const agentId = settings.id ?? `agent_${randomUUID().slice(0, 8)}`;
  // The profile applies to the merged tool list, before the model ever sees a spec.
  const knowledge = settings.knowledge === undefined ? undefined : createKnowledge(settings.knowledge);
  const allTools = [...settings.tools, ...(knowledge?.tools ?? [])];
  const registry = createToolRegistry(settings.toolProfile === undefined ? allTools : applyToolProfile(allTools, settings.toolProfile));
  // The budget runs last, so it measures what earlier preparers (knowledge, user hooks) injected.
  const preparers: readonly MessagePreparer[] = [
    ...(knowledge?.preparers ?? []),
    ...settings.preparers,
    ...(settings.contextBudget === undefined ? [] : [createContextBudget(settings.contextBudget)]),
  ];
  const gate = settings.gate ?? gates.permissive();
  const bus = new EventBus();
  const redactor = createRedactor(settings.redact);
  const journal = new MemoryJournal(settings.journalCapacity);
  bus.attach(journal.write);
  // Subscribed for the agent's lifetime; a throwing handler is reported by the bus, never fatal.
  if (settings.events !== undefined) bus.events$.subscribe(settings.events);
  const breakers: BreakerRegistry | undefined =
    settings.breakers === false
      ? undefined
      : createBreakerRegistry(stripPerTool(settings.breakers), settings.breakers?.perTool, settings.inspect === undefined ? {} : { inspect: settings.inspect });
  const executor: Executor = createExecutor({
    tools: registry,
    // Tool results and errors are redacted before the machine, the model or the log sees them.
    redact: redactor.text,
    ...(breakers === undefined ? {} : { breakers }),
    ...settings.executor,
    ...(settings.recovery === undefined ? {} : { recovery: settings.recovery }),
  });
  const stuckGuard = createStuckGuard(settings.stuckDetection);
  const baseLimits: RunLimits = {
    maxIterations: settings.limits?.maxIterations ?? DEFAULTS.loop.maxIterations,
    maxTotalTokens: settings.limits?.maxTotalTokens ?? DEFAULTS.loop.maxTotalTokens,
    timeoutMs: settings.limits?.timeoutMs ?? DEFAULTS.loop.timeoutMs,
    maxRepairTurns: settings.limits?.maxRepairTurns ?? DEFAULTS.loop.maxRepairTurns,
  };
  const scopes = new Map<string, RunScope>();
  const reasonDeps = {
    provider: settings.provider,
    tools: registry.specs,
    stream: settings.stream,
    ...(settings.modelName === undefined ? {} : { model: settings.modelName }),
    ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
    ...(settings.maxTokens === undefined ? {} : { maxTokens: settings.maxTokens }),
    ...(preparers.length === 0 ? {} : { preparers }),
  };
  const scopeOf = (runId: string): RunScope => {
    const scope = scopes.get(runId);
    if (scope === undefined) throw new Error(`No live scope for run ${runId}.`);
    return scope;
  };
  const hydrator: Hydrator | undefined =
    settings.hydrator ??
    (settings.preHydration === undefined ? undefined : createPreHydrator({ tools: settings.tools, ...settings.preHydration }));
  const system = settings.system === undefined ? undefined : redactor.text(settings.system);
  const runtime = agentPhases({
    agentId,
    reasonDeps,
    ...(hydrator === undefined ? {} : { hydrator }),
    // With a store every run records its hydrate reply, so a resume never depends on whether it has a hydrator.
    recordsHydrate: settings.store?.mode === 'resumable',
    tools: registry,
    gate,
    executor,
    stuckGuard,
    redactor,
    scopeOf,
  });
  // The agent's machine: the agent machine provided with this agent's phase implementations.
  const machine = agentMachine.provide({ actors: { phases: phaseRunner(runtime, { listening }) } });

  /** A new run's machine input and persistence (its log is created here when there is a store). */
  function begin(task: string, options: RunOptions): { input: AgentMachineInput; persistence: RunPersistence | undefined } {
    if (typeof task !== 'string' || task.trim() === '') {
      throw new ConfigurationError('A run needs a non-empty task string.');
    }
    const given = options.runId;
    if (given !== undefined && scopes.has(given)) throw new ConfigurationError(`Run ${given} is already in progress on agent ${agentId}.`);
    const cleanTask = redactor.text(task);
    const run: RunInput = {
      task: cleanTask,
      ...(system === undefined ? {} : { system }),
      ...(options.history === undefined ? {} : { history: redactor.deep([...options.history]) }),
      limits: { ...baseLimits, ...options.limits },
      model: settings.modelName ?? settings.provider.defaultModel,
      toolNames: [...registry.names],
    };
    // Without an id of the caller's, the store picks one (and can skip checks a given id needs).
    const writer = settings.store?.createRun({
      ...(given === undefined ? {} : { runId: given }),
      agentId,
      task: cleanTask,
      input: run,
    });
    const runId = writer?.runId ?? given ?? newRunId();
    return { input: { runId, agentId, ...run }, persistence: writer === undefined ? undefined : createRunPersistence(writer) };
  }

  function start(task: string, options: RunOptions = {}): AgentRun {
    const { input, persistence } = begin(task, options);
    return launch(input, persistence);
  }

  function prepare(task: string, options: RunOptions = {}): PreparedRun {
    const { input, persistence } = begin(task, options);
    return { runId: input.runId, logic: machine, input, attach: (actor) => attach(actor, input, persistence) };
  }

  function resume(runId: string, options: ResumeRunOptions = {}): AgentRun {
    if (settings.store === undefined) {
      throw new ConfigurationError('resume() needs a store: createAgent({ persistence: { store: createFileStore() } }).');
    }
    // A live run holds its lock (until after its scope is gone): a second resume, here or in
    // another process, gets RunLockedError from the store.
    const { writer, recovered, tookOver } = settings.store.resumeRun(runId, options.takeover === true ? { takeover: true } : {});
    for (const warning of recovered.warnings) console.warn(`[actorloop] ${warning}`);
    // A log of an earlier version restores a snapshot (whose context holds these); a run killed
    // before anything but its header was written starts over from its task.
    const context = (recovered.snapshot as { context?: Partial<AgentMachineInput> } | undefined)?.context;
    const input: AgentMachineInput = recovered.input
      ? { runId, agentId: recovered.meta.agentId, ...recovered.input }
      : {
          runId,
          agentId: recovered.meta.agentId,
          task: context?.task ?? recovered.meta.task,
          ...(context === undefined && system !== undefined ? { system } : {}),
          limits: context?.limits ?? baseLimits,
          model: context?.model ?? settings.modelName ?? settings.provider.defaultModel,
          toolNames: registry.names,
        };
    return launch(input, createRunPersistence(writer, recovered.calls), recovered, tookOver);
  }

  /** A root run: its own actor, hooked up before it starts. */
  function launch(input: AgentMachineInput, persistence: RunPersistence | undefined, recovered?: RecoveredRun, tookOver?: RunOwner): AgentRun {
    const actor = createActor(machine, {
      input,
      ...(recovered?.snapshot === undefined ? {} : { snapshot: recovered.snapshot as Snapshot<unknown> }),
      ...(settings.inspect === undefined ? {} : { inspect: settings.inspect }),
    });
    const handle = attach(actor, input, persistence, recovered, tookOver);
    actor.start();
    return handle;
  }

  /**
   * Hook a run's actor, not yet started, into the agent: its events into the journal, bus and
   * store, its end into the result. The actor is a root run's own or one a parent spawned.
   */
  function attach(actor: AgentActor, input: AgentMachineInput, persistence: RunPersistence | undefined, recovered?: RecoveredRun, tookOver?: RunOwner): AgentRun {
    const { runId } = input;
    const startedAt = Date.now();
    let sequence = recovered?.nextSequence ?? 0;
    // A replayed run counts its iterations again; a restored snapshot continues from the journal's.
    let iteration = recovered?.snapshot === undefined ? 0 : recovered.iteration;
    const replay = recovered === undefined ? undefined : new Replay(runId, recovered.replay);
    const publish = (event: LoopEvent): void => {
      // Redacted before anything sees it: subscribers, the in-memory journal, the file log.
      const entry: JournalEntry = { sequence: sequence++, timestamp: Date.now(), agentId, runId, iteration, event: redactor.event(event) };
      persistence?.record(entry);
      bus.publish(entry);
    };
    // The runtime's own events (tools, policy, provider) come only from work done for real.
    const emit = (event: LoopEvent): void => {
      if (replay?.replaying !== true) publish(event);
    };
    // The machine emits the same events again while it re-takes recorded steps: as many as the
    // journal holds are skipped, the rest (emitted after the last write before the crash) are new.
    let alreadyJournaled = recovered === undefined || recovered.snapshot !== undefined ? 0 : machineEventsIn(recovered.eventCounts);
    if (replay !== undefined) {
      publish({
        type: 'run.resumed',
        replayed: recovered?.replay.length ?? 0,
        ...(tookOver === undefined ? {} : { tookOver: { pid: tookOver.pid, ...(tookOver.host === undefined ? {} : { host: tookOver.host }) } }),
      });
    }
    const journalHooks = persistence?.journal;
    // A call made for real ends the replay: what follows is new work.
    const callJournal: CallJournal | undefined =
      journalHooks === undefined || replay === undefined
        ? journalHooks
        : {
            before(call, tool, key) {
              const recordedOutcome = journalHooks.before(call, tool, key);
              if (recordedOutcome === undefined) replay.goLive();
              return recordedOutcome;
            },
            after: (call, outcome, key) => journalHooks.after(call, outcome, key),
          };
    scopes.set(runId, {
      emit,
      reasonScope: { agentId, emit },
      ...(callJournal === undefined ? {} : { journal: callJournal }),
      // Only a resumable run records its phases' replies.
      ...(persistence?.journal === undefined ? {} : { persistence }),
      ...(replay === undefined ? {} : { replay }),
    });
    actor.on('*', (event) => {
      if (event.type === 'reasoning.completed') iteration++;
      if (replay?.replaying === true && event.type === 'human.awaiting') replayHuman(replay, actor);
      else if (replay?.replaying === true && event.type === 'run.terminated') replay.goLive();
      else if (event.type === 'human.decided' && replay?.replaying !== true) {
        persistence?.reply({ kind: 'human', decision: event.decision, toolCallIds: event.toolCallIds, ...(event.reason === undefined ? {} : { reason: event.reason }) });
      }
      if (alreadyJournaled > 0) alreadyJournaled--;
      else publish(event);
    });
    persistence?.onLost((reason) => actor.send({ type: 'agent.cancel', reason: `another process took the run over (${reason})` }));

    let resolveSettled!: (result: LoopResult) => void;
    const settled = new Promise<LoopResult>((resolve) => (resolveSettled = resolve));
    let finished = false;
    const finish = (output: AgentOutput | undefined, error?: unknown) => {
      if (finished) return;
      finished = true;
      scopes.delete(runId);
      const snapshot = actor.getSnapshot();
      // Stopped by its parent actor (XState stops children with their parent): the run is cancelled.
      const ended = output ?? (snapshot.status === 'stopped' ? stoppedOutput(snapshot.context) : undefined);
      if (output === undefined && ended !== undefined) {
        publish({ type: 'run.terminated', reason: 'cancelled', iterations: ended.iterations, usage: { ...ended.usage } });
      }
      const resumable = persistence?.journal !== undefined && isResumableFailure(ended?.reason, ended?.error);
      const result = toResult(ended, error, { runId, agentId, startedAt, messages: snapshot.context.messages, resumable });
      const settle = () => resolveSettled(result);
      // Both never reject; the next run must see this run's remembered answer and final state.
      void Promise.all([
        knowledge?.remember(result, input.task),
        persistence?.finish(result.reason, { ...(resumable ? { resumable } : {}), ...(result.error === undefined ? {} : { error: result.error }) }),
      ]).then(settle, settle);
    };
    actor.subscribe({
      next: (snapshot) => {
        if (persistence !== undefined && snapshot.status === 'active') persistence.onPhase(phaseOf(snapshot.value));
      },
      complete: () => finish(actor.getSnapshot().output),
      // The root error observer: an actor error must never be rethrown into the host.
      error: (error: unknown) => finish(undefined, error),
    });
    const result = settled.then((r) => (r.status === 'done' ? r : Promise.reject(errorForResult(r))));
    // `result` is optional to await; an unobserved rejection must not crash the host.
    result.catch(() => undefined);

    return {
      runId,
      actor,
      // Replays what the run emitted before the subscription (start() emits synchronously), then goes live.
      events$: defer(() => concat(from(journal.entries(runId)), bus.events$.pipe(filter((entry) => entry.runId === runId)))),
      settled,
      result,
      cancel: (reason?: string) => {
        actor.send(reason === undefined ? { type: 'agent.cancel' } : { type: 'agent.cancel', reason });
      },
      approve: (toolCallIds) => actor.send(toolCallIds === undefined ? { type: 'agent.approve' } : { type: 'agent.approve', toolCallIds }),
      reject: (reason, toolCallIds) =>
        actor.send({
          type: 'agent.reject',
          // It goes back to the model (and the log) as the calls' outcome.
          ...(reason === undefined ? {} : { reason: redactor.text(reason) }),
          ...(toolCallIds === undefined ? {} : { toolCallIds }),
        }),
      phase: () => phaseOf(actor.getSnapshot().value),
    };
  }

  const live = new Set<AgentRun>();
  return {
    id: agentId,
    events$: bus.events$,
    tokens$: bus.tokens$,
    journal,
    tools: registry.names,
    model: { provider: settings.provider, name: settings.modelName ?? settings.provider.defaultModel },
    run(task, options) {
      const handle = start(task, options);
      live.add(handle);
      void handle.settled.then(() => live.delete(handle));
      return handle.result;
    },
    prepare,
    start(task, options) {
      const handle = start(task, options);
      live.add(handle);
      void handle.settled.then(() => live.delete(handle));
      return handle;
    },
    resume(runId, options) {
      const handle = resume(runId, options);
      live.add(handle);
      void handle.settled.then(() => live.delete(handle));
      return handle;
    },
    record(runId, event) {
      const scope = scopes.get(runId);
      if (scope === undefined) return false;
      scope.emit(event);
      return true;
    },
    deadLetters: () => executor.deadLetters.list(),
    stop() {
      // A run that already reached a final state is only settling (persisting, remembering).
      for (const handle of live) if (handle.actor.getSnapshot().status === 'active') handle.cancel('agent stopped');
      breakers?.stopAll();
    },
  };
}

function stripPerTool(options: AgentSettings['breakers']): Partial<BreakerOptions> | undefined {
  if (options === undefined || options === false) return undefined;
  const { perTool: _perTool, ...rest } = options;
  return rest;
}


/**
 * A resumed run waits for a human again: the decision the log recorded for this wait is applied
 * again, or, when none was made, the run goes live and waits for one. A log that recorded
 * something else next does not belong to this run's configuration: the run fails.
 */
function replayHuman(replay: Replay, actor: { send(event: AgentEvent | PhaseReply): void }): void {
  let decision: ReturnType<Replay['human']>;
  try {
    decision = replay.human();
  } catch (error) {
    queueMicrotask(() => actor.send({ type: 'phase.error', phase: 'act', error }));
    return;
  }
  if (decision !== undefined) queueMicrotask(() => actor.send(humanEvent(decision)));
}

/** The machine event that applies a recorded human decision again. */
function humanEvent(decision: { decision: 'approve' | 'reject'; toolCallIds: readonly string[]; reason?: string }) {
  return decision.decision === 'approve'
    ? { type: 'agent.approve' as const, toolCallIds: decision.toolCallIds }
    : { type: 'agent.reject' as const, toolCallIds: decision.toolCallIds, ...(decision.reason === undefined ? {} : { reason: decision.reason }) };
}


/** The output of a run its parent stopped: cancelled, with what it had done by then. */
function stoppedOutput(context: AgentContext): AgentOutput {
  return {
    runId: context.runId,
    agentId: context.agentId,
    reason: 'cancelled',
    text: null,
    iterations: context.iteration,
    usage: context.usage,
    costUsd: context.costUsd,
    messages: context.messages,
  };
}

function phaseOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object' && 'running' in value) return String((value as { running: unknown }).running);
  return 'unknown';
}

function toResult(
  output: AgentOutput | undefined,
  error: unknown,
  meta: { runId: string; agentId: string; startedAt: number; messages: readonly Message[]; resumable: boolean },
): LoopResult {
  const durationMs = Date.now() - meta.startedAt;
  if (output === undefined) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      runId: meta.runId,
      agentId: meta.agentId,
      status: 'failed',
      reason: 'error',
      text: null,
      iterations: 0,
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      costUsd: 0,
      messages: meta.messages,
      durationMs,
      error: { name: error instanceof Error ? error.name : 'Error', code: 'actor_error', message },
      cause: error,
    };
  }
  const status = output.reason === 'final_answer' ? 'done' : output.reason === 'cancelled' ? 'cancelled' : 'failed';
  return {
    runId: output.runId,
    agentId: output.agentId,
    status,
    reason: output.reason,
    text: output.text,
    iterations: output.iterations,
    usage: output.usage,
    costUsd: output.costUsd,
    messages: output.messages,
    durationMs,
    ...(output.errorData === undefined ? {} : { error: output.errorData }),
    ...(output.error === undefined ? {} : { cause: output.error }),
    ...(meta.resumable ? { resumable: true } : {}),
  };
}
