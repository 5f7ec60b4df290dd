/**
 * `createAgent`: the front door. An agent owns its tools, gate, breakers and event stream; each
 * `run`/`start` spawns one actor of the agent machine with the runtime's implementations.
 */
import { randomUUID } from 'node:crypto';
import { createActor, type Actor, type InspectionEvent, type Observer, type Snapshot } from 'xstate';
import { concat, defer, filter, from, type Observable } from 'rxjs';
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
import type { RecoveredRun, RunStore } from '../persistence/fileStore.ts';
import { createRunPersistence, type RunPersistence } from './runPersistence.ts';
import type { Hydrator, MessagePreparer } from './hooks.ts';
import { createRedactor } from '../security/redactor.ts';
import type { SecretRuleOptions } from '../security/secrets.ts';
import type { DeadLetter } from '../executor/memory.ts';
import type { InferenceProvider } from '../inference/provider.ts';
import { gates } from '../policy/gates.ts';
import type { PolicyGate } from '../policy/types.ts';
import { createBreakerRegistry, type BreakerRegistry } from '../resilience/breakerRegistry.ts';
import type { BreakerOptions } from '../resilience/circuitBreaker.ts';
import type { RecoveryStrategy } from '../resilience/recovery.ts';
import { createToolRegistry } from '../tools/registry.ts';
import type { StuckDetectionOptions } from '../progress/doomLoop.ts';
import { createStuckGuard } from '../progress/stuckGuard.ts';
import { createContextBudget, type ContextBudgetOptions } from '../context/index.ts';
import { applyToolProfile, type ToolProfile } from '../tools/profile.ts';
import { createKnowledge, type KnowledgeConfig } from '../knowledge/wiring.ts';
import { createPreHydrator, type PreHydratorOptions } from '../hydration/index.ts';
import type { ConfiguredStrategy } from '../strategies/types.ts';
import { runAgentStrategy } from './strategyRun.ts';
import type { Tool } from '../tools/types.ts';
import { errorForResult } from './errors.ts';
import { planCalls } from './gatePhase.ts';
import { bindRuntime, phase, sharedAgentMachine, type AgentRuntime } from './sharedMachine.ts';
import { reason, type ReasonPhaseScope } from './reasonPhase.ts';
import type { LoopResult } from './result.ts';

export interface AgentConfig {
  /** Stable id for journals and the agent system. Default: a random `agent_…` id. */
  readonly id?: string;
  readonly model: InferenceProvider;
  /** Model name override for every call (else the provider's default). */
  readonly modelName?: string;
  readonly system?: string;
  readonly tools?: readonly Tool[];
  /** Default: `gates.permissive()`. */
  readonly gate?: PolicyGate;
  readonly limits?: Partial<RunLimits>;
  /** Recovery for tools that declare none. Default: the error goes back to the model. */
  readonly recovery?: RecoveryStrategy;
  /** Breaker settings for every tool (`false` turns breakers off), with per-tool overrides. */
  readonly breakers?: (Partial<BreakerOptions> & { readonly perTool?: Readonly<Record<string, Partial<BreakerOptions>>> }) | false;
  readonly executor?: { readonly maxConcurrency?: number; readonly timeoutMs?: number; readonly maxResultBytes?: number };
  /** Stream model replies (token deltas on `tokens$`). Default false. */
  readonly stream?: boolean;
  readonly temperature?: number;
  readonly maxTokens?: number;
  /** XState inspection observer for every run's actor (e.g. the Stately inspector). */
  readonly inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** Capacity of the in-memory journal (entries across runs; oldest dropped). Default 10 000. */
  readonly journalCapacity?: number;
  /** Persist journals and snapshots so runs can be listed, replayed and resumed (`createFileStore()`). */
  readonly store?: RunStore;
  /**
   * Secrets to scrub from events, journals and snapshots, on top of the defaults (API-key shapes,
   * bearer tokens, values under keys like `apiKey`/`password`, and the values of OPENAI_API_KEY
   * and friends from the environment).
   */
  readonly redact?: SecretRuleOptions;
  /** Unstable: transforms of the conversation the model sees on each reason step. */
  readonly experimental_preparers?: readonly MessagePreparer[];
  /** Unstable: what `hydrate` does before the first model call. */
  readonly experimental_hydrator?: Hydrator;
  /**
   * End (or redirect) runs stuck in a loop: the same call with the same arguments, or
   * near-identical tool errors, `maxRepeats` (3) times in a row. Off unless set.
   */
  readonly stuckDetection?: StuckDetectionOptions | false;
  /** Keep what the model sees within a token budget (sliding window, observation masking, anchored summary). Off by default. */
  readonly context?: ContextBudgetOptions;
  /** Filter the tools the model sees: include/exclude globs, requireVerified, maxTools. Off by default. */
  readonly toolProfile?: ToolProfile;
  /**
   * The knowledge bridge: `[KNOWLEDGE_CONTEXT]` before each reason step, the recall/store tools,
   * and the final answer remembered as working memory. Off by default.
   */
  readonly knowledge?: KnowledgeConfig;
  /**
   * Resolve references in the task (URLs, paths, `#42`, `PR #55`, custom patterns) before the
   * first model call and inject one `[PRE_HYDRATED_CONTEXT]` message. Off by default.
   */
  readonly preHydration?: PreHydratorOptions;
  /**
   * A reasoning strategy (`strategies.vote()`, `.tree()`, …): `run(task)` then runs it, with each
   * branch a sub-agent built from this same configuration. No strategy = the plain loop.
   */
  readonly strategy?: ConfiguredStrategy<unknown, unknown>;
}

export interface RunOptions {
  /** Prior messages to continue from (e.g. an earlier conversation). */
  readonly history?: readonly Message[];
  readonly runId?: string;
  readonly limits?: Partial<RunLimits>;
}

/** A run in progress. */
export interface AgentRun {
  readonly runId: string;
  /** The XState actor running the loop (inspect it, `getSnapshot()` it). */
  readonly actor: Actor<typeof agentMachine>;
  /** This run's entries only, from its first (replayed from the in-memory journal) and then live. */
  readonly events$: Observable<JournalEntry>;
  /** Resolves with the result however the run ends; never rejects. */
  readonly settled: Promise<LoopResult>;
  /** Resolves with the result of a run that finished with an answer; rejects with a typed error otherwise. */
  readonly result: Promise<LoopResult>;
  /** Abort the in-flight model call and every running tool; the run ends `cancelled`. */
  cancel(reason?: string): void;
  /** Approve calls waiting in `awaitingHuman` (all of them, or the ids given). */
  approve(toolCallIds?: readonly string[]): void;
  /** Reject calls waiting in `awaitingHuman`; the reason goes back to the model. */
  reject(reason?: string, toolCallIds?: readonly string[]): void;
  /** The phase the run is in (`reason`, `awaitingHuman`, …) or its final state. */
  phase(): string;
}

export interface Agent {
  readonly id: string;
  /** Every entry of every run of this agent. */
  readonly events$: Observable<JournalEntry>;
  /** Streamed text deltas (when `stream: true`). */
  readonly tokens$: Observable<string>;
  readonly journal: MemoryJournal;
  readonly tools: readonly string[];
  /** Run a task to its end. Resolves with the result, or rejects with a typed error carrying it. */
  run(task: string, options?: RunOptions): Promise<LoopResult>;
  /** Start a task and get a handle to watch, approve or cancel it. */
  start(task: string, options?: RunOptions): AgentRun;
  /**
   * Continue a persisted run (needs `store`) from its last snapshot: completed tool calls are not
   * re-run; an interrupted call re-runs only if its tool is idempotent, else waits for a human.
   */
  resume(runId: string): AgentRun;
  /** Calls recorded by the dead-letter recovery strategy. */
  deadLetters(): DeadLetter[];
  /** Cancel every run in flight and stop the breakers. */
  stop(): void;
}

interface RunScope {
  emit(event: LoopEvent): void;
  /** One object per run: the reason phase keys per-run state on it. */
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
    act: phase<ActOutput, ActInput>(async ({ input, signal }) => {
      const scope = scopeOf(input.runId);
      const outcomes = await executor.run(input.calls, {
        runId: input.runId,
        agentId,
        signal,
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
    const runId = options.runId ?? `run_${randomUUID()}`;
    if (scopes.has(runId)) throw new ConfigurationError(`Run ${runId} is already in progress on agent ${agentId}.`);
    const writer = config.store?.createRun({ runId, agentId, task, redact: redactor.deep });
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
    scopes.set(runId, { emit, reasonScope: { agentId, emit }, ...(persistence === undefined ? {} : { journal: persistence.journal }) });
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
      const persisted = persistence === undefined ? undefined : persistedWithoutMessages(actor);
      const settle = () => resolveSettled(result);
      // Both never reject; the next run must see this run's remembered answer and final state.
      void Promise.all([
        knowledge?.remember(result, input.task),
        persistence?.finish(result.reason, persisted, snapshot.context.messages),
      ]).then(settle, settle);
    };
    actor.subscribe({
      next: (snapshot) => {
        if (persistence !== undefined && snapshot.status === 'active') {
          persistence.onSnapshot(phaseOf(snapshot.value), () => persistedWithoutMessages(actor), snapshot.context.messages);
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
