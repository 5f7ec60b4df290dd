/**
 * `createAgent`: the front door. An agent owns its tools, gate, breakers and event stream; each
 * `run`/`start` spawns one actor of the agent machine with the runtime's implementations.
 */
import { randomUUID } from 'node:crypto';
import { createActor, type Actor, type Snapshot } from 'xstate';
import { concat, defer, filter, from } from 'rxjs';
import type { agentMachine } from '../../machines/agent.machine.ts';
import type {
  ActInput,
  ActOutput,
  AgentMachineInput,
  AgentOutput,
  GateInput,
  GateOutput,
  HydrateInput,
  HydrateOutput,
  ReasonInput,
  ReasonOutput,
  RunLimits,
} from '../../machines/agent.types.ts';
import type { Message } from '../conversation/messages.ts';
import { DEFAULTS } from '../defaults.ts';
import { ConfigurationError } from '../errors.ts';
import { EventBus } from '../events/eventBus.ts';
import type { JournalEntry, LoopEvent } from '../events/loopEvent.ts';
import { MemoryJournal } from '../events/memoryJournal.ts';
import { createExecutor, type CallJournal, type Executor } from '../executor/executor.ts';
import type { RecoveredRun } from '../persistence/fileStore.ts';
import { newRunId } from '../persistence/records.ts';
import { createRunPersistence, type RunPersistence } from './runPersistence.ts';
import type { Hydrator, MessagePreparer } from './hooks.ts';
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
import { runAgentStrategy } from './strategyRun.ts';
import { errorForResult } from './errors.ts';
import { planCalls } from './gatePhase.ts';
import { bindRuntime, phase, sharedAgentMachine, type AgentRuntime } from './sharedMachine.ts';
import { reason, type ReasonPhaseScope } from './reasonPhase.ts';
import type { LoopResult } from './result.ts';

import type { Agent, AgentConfig, AgentRun, RunOptions } from './types.ts';

export type { Agent, AgentConfig, AgentRun, RunOptions } from './types.ts';

interface RunScope {
  emit(event: LoopEvent): void;
  /** Built once per run, not per model call. */
  readonly reasonScope: ReasonPhaseScope;
  readonly journal?: CallJournal;
}

/**
 * @example
 * ```ts
 * const agent = createAgent({ model: openAICompatible(), tools: [add], limits: { maxIterations: 10 } });
 * agent.events$.subscribe((e) => console.log(e.event.type));
 * const result = await agent.run('What is 6 * 7?');
 * ```
 */
export function createAgent(config: AgentConfig): Agent {
  if (config === null || typeof config !== 'object' || config.model === undefined) {
    throw new ConfigurationError('createAgent needs a `model` (an InferenceProvider such as openAICompatible() or scriptedModel([...])).');
  }
  const agentId = config.id ?? `agent_${randomUUID().slice(0, 8)}`;
  // The profile applies to the merged tool list, before the model ever sees a spec.
  const knowledge = config.knowledge === undefined ? undefined : createKnowledge(config.knowledge);
  const allTools = [...(config.tools ?? []), ...(knowledge?.tools ?? [])];
  const registry = createToolRegistry(config.toolProfile === undefined ? allTools : applyToolProfile(allTools, config.toolProfile));
  // The budget runs last, so it measures what earlier preparers (knowledge, user hooks) injected.
  const preparers: readonly MessagePreparer[] = [
    ...(knowledge?.preparers ?? []),
    ...(config.experimental_preparers ?? []),
    ...(config.context === undefined ? [] : [createContextBudget(config.context)]),
  ];
  const gate = config.gate ?? gates.permissive();
  const bus = new EventBus();
  const redactor = createRedactor(config.redact);
  const journal = new MemoryJournal(config.journalCapacity);
  bus.attach(journal.write);
  const breakers: BreakerRegistry | undefined =
    config.breakers === false
      ? undefined
      : createBreakerRegistry(stripPerTool(config.breakers), config.breakers?.perTool, config.inspect === undefined ? {} : { inspect: config.inspect });
  const executor: Executor = createExecutor({
    tools: registry,
    ...(breakers === undefined ? {} : { breakers }),
    ...config.executor,
    ...(config.recovery === undefined ? {} : { recovery: config.recovery }),
  });
  const stuckGuard = createStuckGuard(config.stuckDetection);
  const baseLimits: RunLimits = {
    maxIterations: config.limits?.maxIterations ?? DEFAULTS.loop.maxIterations,
    maxTotalTokens: config.limits?.maxTotalTokens ?? DEFAULTS.loop.maxTotalTokens,
    timeoutMs: config.limits?.timeoutMs ?? DEFAULTS.loop.timeoutMs,
    maxRepairTurns: config.limits?.maxRepairTurns ?? DEFAULTS.loop.maxRepairTurns,
  };
  const scopes = new Map<string, RunScope>();
  const reasonDeps = {
    provider: config.model,
    tools: registry.specs,
    stream: config.stream ?? false,
    ...(config.modelName === undefined ? {} : { model: config.modelName }),
    ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
    ...(config.maxTokens === undefined ? {} : { maxTokens: config.maxTokens }),
    ...(preparers.length === 0 ? {} : { preparers }),
  };
  const scopeOf = (runId: string): RunScope => {
    const scope = scopes.get(runId);
    if (scope === undefined) throw new Error(`No live scope for run ${runId}.`);
    return scope;
  };
  const hydrator: Hydrator | undefined =
    config.experimental_hydrator ??
    (config.preHydration === undefined ? undefined : createPreHydrator({ tools: config.tools ?? [], ...config.preHydration }));
  // One machine for the whole process (sharedMachine.ts): each run is bound to these implementations.
  const runtime: AgentRuntime = {
    reason: phase<ReasonOutput, ReasonInput>(({ input, signal }) =>
      reason(input, reasonDeps, scopeOf(input.runId).reasonScope, signal),
    ),
    ...(hydrator === undefined
      ? {}
      : {
          hydrate: phase<HydrateOutput, HydrateInput>(({ input, signal }) =>
            hydrator(
              { task: input.task, messages: input.messages },
              { runId: input.runId, agentId, iteration: 0, signal, emit: scopeOf(input.runId).emit },
            ),
          ),
        }),
    gate: phase<GateOutput, GateInput>(({ input }) => {
      const scope = scopeOf(input.runId);
      return planCalls(input, { tools: registry, gate }, { runId: input.runId, agentId, emit: scope.emit });
    }),
    act: phase<ActOutput, ActInput>(async ({ input, cancellation }) => {
      const scope = scopeOf(input.runId);
      const outcomes = await executor.run(input.calls, {
        runId: input.runId,
        agentId,
        signal: cancellation,
        emit: scope.emit,
        ...(scope.journal === undefined ? {} : { journal: scope.journal }),
      });
      return stuckGuard.check(scope, input.calls, outcomes);
    }),
  };

  function start(task: string, options: RunOptions = {}): AgentRun {
    if (config.strategy !== undefined) {
      throw new ConfigurationError('An agent with a strategy runs with agent.run(task); for a live handle (events$, cancel) use startStrategy({ strategy, task, subAgent }).');
    }
    if (typeof task !== 'string' || task.trim() === '') {
      throw new ConfigurationError('A run needs a non-empty task string.');
    }
    const given = options.runId;
    if (given !== undefined && scopes.has(given)) throw new ConfigurationError(`Run ${given} is already in progress on agent ${agentId}.`);
    // Without an id of the caller's, the store picks one (and can skip checks a given id needs).
    const writer = config.store?.createRun({ ...(given === undefined ? {} : { runId: given }), agentId, task, redact: redactor.deep });
    const runId = writer?.runId ?? given ?? newRunId();
    const input: AgentMachineInput = {
      runId,
      agentId,
      task,
      ...(config.system === undefined ? {} : { system: config.system }),
      ...(options.history === undefined ? {} : { history: options.history }),
      limits: { ...baseLimits, ...options.limits },
      model: config.modelName ?? config.model.defaultModel,
      toolNames: registry.names,
    };
    return launch(input, writer === undefined ? undefined : createRunPersistence(writer));
  }

  function resume(runId: string): AgentRun {
    if (config.store === undefined) {
      throw new ConfigurationError('resume() needs a store: createAgent({ store: createFileStore() }).');
    }
    // A live run holds its lock (until after its scope is gone): a second resume, here or in
    // another process, gets RunLockedError from the store.
    const { writer, recovered } = config.store.resumeRun(runId, { redact: redactor.deep });
    for (const warning of recovered.warnings) console.warn(`[actorloop] ${warning}`);
    const context = (recovered.snapshot as { context?: Partial<AgentMachineInput> }).context;
    const input: AgentMachineInput = {
      runId,
      agentId: recovered.meta.agentId,
      task: context?.task ?? recovered.meta.task,
      limits: context?.limits ?? baseLimits,
      model: context?.model ?? config.modelName ?? config.model.defaultModel,
      toolNames: registry.names,
    };
    return launch(input, createRunPersistence(writer, recovered), recovered);
  }

  function launch(input: AgentMachineInput, persistence: RunPersistence | undefined, recovered?: RecoveredRun): AgentRun {
    const { runId } = input;
    const startedAt = Date.now();
    let sequence = recovered?.nextSequence ?? 0;
    let iteration = recovered?.iteration ?? 0;
    const emit = (event: LoopEvent): void => {
      // Redacted before anything sees it: subscribers, the in-memory journal, the file log.
      const entry: JournalEntry = { sequence: sequence++, timestamp: Date.now(), agentId, runId, iteration, event: redactor.event(event) };
      persistence?.record(entry);
      bus.publish(entry);
    };
    scopes.set(runId, { emit, reasonScope: { agentId, emit }, ...(persistence?.journal === undefined ? {} : { journal: persistence.journal }) });
    const actor = createActor(sharedAgentMachine, {
      input,
      ...(recovered === undefined ? {} : { snapshot: recovered.snapshot as Snapshot<unknown> }),
      ...(config.inspect === undefined ? {} : { inspect: config.inspect }),
    });
    bindRuntime(actor, runtime);
    actor.on('*', (event) => {
      if (event.type === 'reasoning.completed') iteration++;
      emit(event);
    });

    let resolveSettled!: (result: LoopResult) => void;
    const settled = new Promise<LoopResult>((resolve) => (resolveSettled = resolve));
    let finished = false;
    const finish = (output: AgentOutput | undefined, error?: unknown) => {
      if (finished) return;
      finished = true;
      scopes.delete(runId);
      const snapshot = actor.getSnapshot();
      const result = toResult(output, error, { runId, agentId, startedAt, messages: snapshot.context.messages });
      const settle = () => resolveSettled(result);
      // Both never reject; the next run must see this run's remembered answer and final state.
      void Promise.all([
        knowledge?.remember(result, input.task),
        persistence?.finish(result.reason, persisted, snapshot.context.messages),
      ]).then(settle, settle);
    };
    // One getter per run, not one closure per snapshot: most snapshots are not persisted.
    const persisted = (): unknown => persistedWithoutMessages(actor);
    actor.subscribe({
      next: (snapshot) => {
        if (persistence !== undefined && snapshot.status === 'active') {
          persistence.onSnapshot(phaseOf(snapshot.value), persisted, snapshot.context.messages);
        }
      },
      complete: () => finish(actor.getSnapshot().output),
      // The root error observer: an actor error must never be rethrown into the host.
      error: (error: unknown) => finish(undefined, error),
    });
    actor.start();
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
          ...(reason === undefined ? {} : { reason }),
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
    run(task, options) {
      if (config.strategy !== undefined) {
        return runAgentStrategy({ ...config, strategy: config.strategy }, agentId, task, options ?? {}, (entry) => bus.publish(entry));
      }
      const handle = start(task, options);
      live.add(handle);
      void handle.settled.then(() => live.delete(handle));
      return handle.result;
    },
    start(task, options) {
      const handle = start(task, options);
      live.add(handle);
      void handle.settled.then(() => live.delete(handle));
      return handle;
    },
    resume(runId) {
      const handle = resume(runId);
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

function stripPerTool(options: AgentConfig['breakers']): Partial<BreakerOptions> | undefined {
  if (options === undefined || options === false) return undefined;
  const { perTool: _perTool, ...rest } = options;
  return rest;
}

const NO_MESSAGES: readonly Message[] = Object.freeze([]);

/**
 * The actor's persisted snapshot with the conversation left out: XState's own serialisation
 * walks the whole context, which would make every persist O(conversation). The run log holds
 * the messages separately (see persistence/snapshotCodec.ts).
 */
function persistedWithoutMessages(actor: Actor<typeof agentMachine>): unknown {
  const snapshot = actor.getSnapshot();
  return actor.logic.getPersistedSnapshot({ ...snapshot, context: { ...snapshot.context, messages: NO_MESSAGES } });
}

function phaseOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object' && 'running' in value) return String((value as { running: unknown }).running);
  return 'unknown';
}

function toResult(
  output: AgentOutput | undefined,
  error: unknown,
  meta: { runId: string; agentId: string; startedAt: number; messages: readonly Message[] },
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
  };
}
