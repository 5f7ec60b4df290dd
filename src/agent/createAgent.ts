/**
 * `createAgent`: the front door. An agent owns its tools, gate, breakers and event stream; each
 * `run`/`start` makes one actor of the agent machine provided with the runtime's phases, and
 * `prepare` readies one for a parent actor to spawn; `runHandle.ts` hooks either into the agent.
 */
import { randomUUID } from 'node:crypto';
import { getEventListeners } from 'node:events';
import { createActor, type Actor, type Snapshot } from 'xstate';
import type { AgentMachineInput } from '../../machines/agent.types.ts';
import type { RunLimits } from '../core/run.ts';
import { agentMachine } from '../../machines/agent.machine.ts';
import { phaseRunner } from '../../machines/phaseRunner.ts';
import { DEFAULTS } from '../core/defaults.ts';
import { ConfigurationError } from '../core/errors.ts';
import { EventBus } from '../events/eventBus.ts';
import { reportingOnce } from '../events/subscriberErrors.ts';
import { MemoryJournal } from '../events/memoryJournal.ts';
import { createExecutor, type Executor } from '../executor/executor.ts';
import { createOverflowCompaction } from '../context/overflow.ts';
import type { RecoveredRun } from '../persistence/recover.ts';
import { newRunId, type RunInput, type RunOwner } from '../persistence/records.ts';
import { createRunPersistence, type RunPersistence } from '../run/persistence.ts';
import { runOf, type RunContext } from '../run/context.ts';
import { recordedPhases } from '../run/recording.ts';
import { attachRun, type RunHost } from './runHandle.ts';
import { rearmRunTimeout, restoreActor, restoredSnapshot } from './checkpoint.ts';
import { agentPhases } from './runtime.ts';
import type { Hydrator, MessagePreparer } from '../core/hooks.ts';
import { createRedactor } from '../security/redactor.ts';
import { gates } from '../policy/gates.ts';
import { taintPolicy } from '../policy/taint.ts';
import { createBreakerRegistry, type BreakerRegistry } from '../resilience/breakerRegistry.ts';
import type { BreakerOptions } from '../resilience/circuitBreaker.ts';
import { createToolRegistry, type ToolRegistry } from '../tools/registry.ts';
import { createLiveTools } from './liveTools.ts';
import { mcpContextHydrator } from './mcpContext.ts';
import { durableElicitor, mcpElicitor, mcpSampler } from './mcpRequests.ts';
import { createStuckGuard } from '../progress/stuckGuard.ts';
import { createContextBudget } from '../context/index.ts';
import { applyToolProfile } from '../tools/profile.ts';
import { createKnowledge } from '../knowledge/wiring.ts';
import { createPreHydrator } from '../hydration/index.ts';
import { resolveConfig, type AgentSettings } from './config.ts';
import { createHookRunner } from './hooks.ts';
import { createTraces } from '../traces/query.ts';
import { traceEvents } from '../telemetry/index.ts';
import { activeSkill, allowedTools, createSkillTool, skillsPromptSection, type Skill } from '../skills/index.ts';
import type { ToolView } from './gatePhase.ts';
import { createMemorySessionStore, openSessionStore, type SessionMemory, type SessionStore } from '../sessions/index.ts';
import { openSession, type SessionHost } from './session.ts';
import { createExperienceMemory } from './experiences.ts';

import { answerSpec } from './structuredAnswer.ts';
import type { Agent, AgentConfig, AgentResult, AgentRun, BoundRuntime, PreparedRun, ResumeRunOptions, RunOptions } from './types.ts';
import { contentText, mediaParts, type ImagePart, type Message } from '../core/messages.ts';
import { checkParts, taskContent, type ContentLimits, type TaskInput } from '../conversation/parts.ts';
import { createFileBlobStore, createMemoryBlobStore, loadMessageParts, storeMessageParts, storeParts, type BlobStore } from '../persistence/blobs.ts';
import { join } from 'node:path';
import type { Tool } from '../tools/types.ts';

type AgentActor = Actor<typeof agentMachine>;

export type { Agent, AgentConfig, AgentResult, AgentRun, ModelConfig, PreparedRun, ResumeRunOptions, RunOptions } from './types.ts';

/** Whether anything still listens to a phase's signal: if not, the next phase may reuse it. */
const listening = (signal: AbortSignal): boolean => getEventListeners(signal, 'abort').length > 0;

/**
 * @example
 * ```ts
 * const agent = createAgent({ model: openAICompatible(), tools: [add], limits: { maxIterations: 10 } });
 * agent.events$.subscribe((e) => console.log(e.event.type));
 * const result = await agent.run('What is 6 * 7?');
 * ```
 */
export function createAgent<TOutput = unknown>(config: AgentConfig<TOutput>): Agent<TOutput> {
  // Checked and flattened at the edge: everything below reads `settings`, never `config`.
  const settings = resolveConfig(config as AgentConfig);
  const agentId = settings.id ?? `agent_${randomUUID().slice(0, 8)}`;
  // The profile applies to the merged tool list, before the model ever sees a spec.
  const knowledge = settings.knowledge === undefined ? undefined : createKnowledge(settings.knowledge);
  const skills = settings.skills;
  const ownTools = [...settings.tools, ...(knowledge?.tools ?? []), ...(skills === undefined ? [] : [createSkillTool(skills)])];
  // A durable runtime calls the model and the tools through itself: each call is recorded before the run sees it.
  const redactor = createRedactor(settings.redact);
  const durable: BoundRuntime | undefined = settings.runtime?.bind({
    agentId,
    provider: settings.provider,
    tools: ownTools,
    redact: redactor.deep,
    tool: async (name): Promise<Tool | undefined> => {
      if (mcp !== undefined && !mcp.has(name)) await mcp.sync();
      return registry.get(name);
    },
    start: (task, options, mode) => start(task, options, mode),
    resume: (runId) => resume(runId),
  });
  const allTools = durable?.tools ?? ownTools;
  const store = durable?.store ?? settings.store;
  const provider = durable?.provider ?? settings.provider;
  const runs = new Map<string, RunContext>();
  const mcp =
    settings.mcpServers.length === 0
      ? undefined
      : createLiveTools(allTools, settings.mcpServers, settings.toolProfile, durable?.wrapTool, {
          sampler: mcpSampler(provider, settings.modelName ?? provider.defaultModel, runs, redactor.text),
          // A durable call cannot wait for a person: its server's questions are refused, saying why.
          elicitor: durable === undefined ? mcpElicitor(runs) : durableElicitor(),
          // Tokens an MCP server's OAuth yields are secrets like its headers; its restarts go to the runs using it.
          onSecret: (secret: string) => redactor.addSecret(secret),
          onRestarted: (server: string, attempts: number) => {
            for (const run of runs.values()) run.emit({ type: 'mcp.restarted', server, attempts });
          },
        });
  const registry: ToolRegistry = mcp ?? createToolRegistry(settings.toolProfile === undefined ? allTools : applyToolProfile(allTools, settings.toolProfile));
  // The budget runs last, so it measures what knowledge injected; the user's beforeModelCall sees the result.
  const preparers: readonly MessagePreparer[] = [
    ...(knowledge?.preparers ?? []),
    ...(settings.contextBudget === undefined ? [] : [createContextBudget(settings.contextBudget)]),
  ];
  const gate = settings.gate ?? gates.permissive();
  const bus = new EventBus();
  const hooks = createHookRunner(settings.hooks, redactor.deep);
  const journal = new MemoryJournal(settings.journalCapacity);
  const traces = createTraces({ agentId, journal, ...(durable !== undefined ? { runs: durable.runs } : store === undefined ? {} : { store }) });
  bus.attach(journal.write);
  // Subscribed for the agent's lifetime; a throwing handler is reported once, never fatal.
  // A durable agent's entries are those its runs committed, wherever they ran (a worker's steps replay them locally).
  const entries$ = durable?.events$ ?? bus.events$;
  if (settings.events !== undefined) entries$.subscribe(reportingOnce(settings.events, 'the observe.events handler'));
  if (settings.telemetry !== undefined) traceEvents(entries$, settings.telemetry === true ? {} : settings.telemetry);
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
    // Images tools return reach a model that takes them; ones the chat formats cannot carry stay described in text.
    ...(settings.vision ? { storeImages: (images: readonly ImagePart[]) => storeParts(images.filter((part) => sendable(part, settings.content)), blobs()) as ImagePart[] } : {}),
  });
  const stuckGuard = createStuckGuard(settings.stuckDetection);
  const baseLimits: RunLimits = {
    maxIterations: settings.limits?.maxIterations ?? DEFAULTS.loop.maxIterations,
    maxTotalTokens: settings.limits?.maxTotalTokens ?? DEFAULTS.loop.maxTotalTokens,
    timeoutMs: settings.limits?.timeoutMs ?? DEFAULTS.loop.timeoutMs,
    maxRepairTurns: settings.limits?.maxRepairTurns ?? DEFAULTS.loop.maxRepairTurns,
  };
  // Images and files of runs: beside the store's runs when there is a store (a resume reads them there), else in memory.
  let blobStore: BlobStore | undefined;
  const blobs = (): BlobStore => (blobStore ??= store === undefined ? createMemoryBlobStore() : createFileBlobStore(join(store.dir, 'blobs')));
  const reasonDeps = {
    provider,
    tools: registry.specs,
    stream: settings.stream,
    ...(settings.modelName === undefined ? {} : { model: settings.modelName }),
    ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
    ...(settings.maxTokens === undefined ? {} : { maxTokens: settings.maxTokens }),
    ...(settings.reasoningEffort === undefined ? {} : { reasoningEffort: settings.reasoningEffort }),
    ...(settings.onLength === undefined ? {} : { onLength: settings.onLength }),
    ...(preparers.length === 0 ? {} : { preparers }),
    ...(hooks?.beforeModelCall === undefined ? {} : { beforeModelCall: hooks.beforeModelCall }),
    loadParts: (messages: readonly Message[]) => loadMessageParts(messages, blobs()),
    ...(settings.compactOnOverflow === false ? {} : { overflow: createOverflowCompaction(settings.contextBudget) }),
    ...(settings.output === undefined ? {} : { answer: answerSpec(settings.output, provider.supportsStructuredOutput) }),
  };
  const experiences =
    settings.experiences === undefined
      ? undefined
      : createExperienceMemory(settings.experiences, {
          model: settings.provider,
          ...(settings.modelName === undefined ? {} : { modelName: settings.modelName }),
          tools: () => registry.names,
          traces,
          redact: redactor.deep,
        });
  const ownHydrator: Hydrator | undefined =
    settings.hydrator ??
    (settings.preHydration === undefined ? undefined : createPreHydrator({ tools: settings.tools, ...settings.preHydration }));
  const contextServers = settings.mcpServers.filter((server) => server.resources === 'context').map((server) => server.name);
  const resourceHydrator =
    mcp === undefined || contextServers.length === 0
      ? undefined
      : mcpContextHydrator(mcp.servers, contextServers, {
          ...(settings.preHydration?.maxContextTokens === undefined ? {} : { maxContextTokens: settings.preHydration.maxContextTokens }),
          ...(settings.preHydration?.timeoutMs === undefined ? {} : { timeoutMs: settings.preHydration.timeoutMs }),
        });
  const hydrator = alongside(experiences?.hydrator, alongside(ownHydrator, resourceHydrator));
  // Skills are listed after the user's own system prompt; their bodies load on demand.
  const composed = [settings.system ?? '', skills === undefined ? '' : skillsPromptSection(skills)].filter((part) => part !== '').join('\n\n');
  const system = composed === '' ? undefined : redactor.text(composed);
  const runtime = agentPhases({
    agentId,
    reasonDeps,
    ...(hydrator === undefined ? {} : { hydrator }),
    // With a store every run records its hydrate reply, so a resume never depends on whether it has a hydrator.
    recordsHydrate: store?.mode === 'resumable',
    tools: registry,
    ...(mcp === undefined ? {} : { syncTools: mcp.sync }),
    gate,
    // Tracked unless turned off: side effects after untrusted content wait for a human.
    ...(settings.taint === false ? {} : { taint: taintPolicy(settings.taint) }),
    executor,
    stuckGuard,
    redactor,
    ...(hooks === undefined ? {} : { hooks }),
    ...(skills === undefined ? {} : { toolView: skillToolView(skills) }),
  });
  // The agent's machine: the agent machine provided with this agent's phase implementations.
  const recorded = recordedPhases(runtime);
  const machine = agentMachine.provide({ actors: { phases: phaseRunner(durable === undefined ? recorded : durable.phases(recorded), { listening, runOf }) } });

  /** A new run's machine input and persistence (its log is created here when there is a store). */
  function begin(task: TaskInput, options: RunOptions, mode?: 'call'): { input: AgentMachineInput; persistence: RunPersistence | undefined } {
    const content = typeof task === 'string' || Array.isArray(task) ? taskContent(task) : undefined;
    if (content === undefined || (contentText(content).trim() === '' && (typeof content === 'string' || mediaParts(content) === 0))) {
      throw new ConfigurationError('A run needs a non-empty task: a string, or an array of text and parts (image(...), file(...)).');
    }
    const given = options.runId;
    if (given !== undefined && runs.has(given)) throw new ConfigurationError(`Run ${given} is already in progress on agent ${agentId}.`);
    const partsOf = (messages: readonly Message[]) => messages.flatMap((message) => (message.role === 'user' && typeof message.content !== 'string' ? message.content : message.role === 'tool' ? (message.parts ?? []) : []));
    const limits = { vision: settings.vision, ...settings.content };
    if (typeof content !== 'string') checkParts(content, limits);
    if (options.history !== undefined) checkParts(partsOf(options.history), limits);
    // Bytes go to the blob store here, before anything copies the conversation: it carries references from now on.
    const parts = typeof content === 'string' ? undefined : storeParts(content, blobs());
    const history = options.history === undefined ? undefined : storeMessageParts(options.history, blobs());
    const cleanTask = redactor.text(contentText(content));
    const run: RunInput = {
      task: cleanTask,
      ...(parts === undefined ? {} : { content: redactor.deep(parts) }),
      ...(system === undefined ? {} : { system }),
      ...(history === undefined ? {} : { history: redactor.deep(history) }),
      // A single call is a run of one model call, offered no tools.
      limits: mode === 'call' ? { ...baseLimits, ...options.limits, maxIterations: 1 } : { ...baseLimits, ...options.limits },
      model: settings.modelName ?? settings.provider.defaultModel,
      toolNames: mode === 'call' ? [] : [...registry.names],
      ...(mode === undefined ? {} : { mode }),
    };
    // Without an id of the caller's, the store picks one (and can skip checks a given id needs).
    const writer = store?.createRun({
      ...(given === undefined ? {} : { runId: given }),
      agentId,
      task: cleanTask,
      input: run,
    });
    const runId = writer?.runId ?? given ?? newRunId();
    return { input: { runId, agentId, ...run }, persistence: writer === undefined ? undefined : createRunPersistence(writer) };
  }

  function start(task: TaskInput, options: RunOptions = {}, mode?: 'call'): AgentRun {
    const { input, persistence } = begin(task, options, mode);
    const handle = launch(input, persistence);
    followSignal(handle, options.signal);
    return handle;
  }

  function prepare(task: TaskInput, options: RunOptions = {}): PreparedRun {
    const { input, persistence } = begin(task, options);
    return { runId: input.runId, logic: machine, input, attach: (actor) => attach(actor, input, persistence) };
  }

  function resume(runId: string, options: ResumeRunOptions = {}): AgentRun {
    if (store === undefined) {
      throw new ConfigurationError('resume() needs a store: createAgent({ persistence: { store: createFileStore() } }).');
    }
    // A live run holds its lock (until after its scope is gone): a second resume, here or in
    // another process, gets StoreError (run_locked) from the store.
    const { writer, recovered, tookOver } = store.resumeRun(runId, options.takeover === true ? { takeover: true } : {});
    for (const warning of recovered.warnings) console.warn(`[actorloop] ${warning}`);
    // Before any tool runs: the run's breakers go on where its log left them (a newer state the
    // agent's breakers already have is kept), and its next checkpoint carries them on.
    if (recovered.breakers !== undefined) {
      breakers?.restore(recovered.breakers);
      writer.carryBreakers(recovered.breakers);
    }
    // A checkpoint restores a snapshot (whose context holds these); a run killed before anything
    // but its header was written starts over from its task.
    const context = (restoredSnapshot(recovered) as { context?: Partial<AgentMachineInput> } | undefined)?.context;
    const input: AgentMachineInput = recovered.input
      ? { runId, agentId: recovered.meta.agentId, ...recovered.input }
      : {
          runId,
          agentId: recovered.meta.agentId,
          task: recovered.meta.task,
          ...(system === undefined ? {} : { system }),
          limits: baseLimits,
          model: settings.modelName ?? settings.provider.defaultModel,
          toolNames: registry.names,
          ...(context?.mode === undefined ? {} : { mode: context.mode }),
        };
    return launch(input, createRunPersistence(writer, recovered.calls), recovered, tookOver);
  }

  /** A root run: its own actor, hooked up before it starts. */
  function launch(input: AgentMachineInput, persistence: RunPersistence | undefined, recovered?: RecoveredRun, tookOver?: RunOwner): AgentRun {
    const create = (snapshot?: Record<string, unknown>) =>
      createActor(machine, {
        input,
        ...(snapshot === undefined ? {} : { snapshot: snapshot as Snapshot<unknown> }),
        ...(settings.inspect === undefined ? {} : { inspect: settings.inspect }),
      });
    const snapshot = recovered === undefined ? undefined : restoredSnapshot(recovered);
    const actor = snapshot === undefined ? create() : recovered?.checkpoint === undefined ? create(snapshot) : restoreActor(snapshot, create);
    const handle = attach(actor, input, persistence, recovered, tookOver);
    actor.start();
    if (recovered?.checkpoint !== undefined) rearmRunTimeout(actor);
    return handle;
  }

  const host: RunHost = {
    agentId,
    redactor,
    bus,
    journal,
    runs,
    ...(knowledge === undefined ? {} : { knowledge }),
    ...(hooks === undefined ? {} : { hooks }),
    ...(experiences === undefined ? {} : { experiences }),
    sessionOf: (runId) => sessionRuns.get(runId),
    stuckGuard,
  };
  const attach = (actor: AgentActor, input: AgentMachineInput, persistence: RunPersistence | undefined, recovered?: RecoveredRun, tookOver?: RunOwner): AgentRun =>
    attachRun(host, actor, input, persistence, recovered, tookOver);

  const sessionRuns = new Map<string, SessionMemory>();
  const sessionStore: SessionStore | undefined = settings.sessions === undefined || isSessionStore(settings.sessions) ? settings.sessions : openSessionStore({ ...settings.sessions, redact: redactor });
  let memorySessions: SessionStore | undefined;
  const sessionHost: SessionHost = {
    get store() {
      return sessionStore ?? (memorySessions ??= createMemorySessionStore({ redact: redactor }));
    },
    hasSystem: system !== undefined,
    ...(durable === undefined ? {} : { sharedMemory: (sessionId: string) => durable.sessionMemory(sessionId) }),
    start(message, options, memory, sessionId) {
      // A durable run's tools run in workers: they find the session's memory the runtime keeps by the session's id.
      if (durable !== undefined) return durable.start(message, options, undefined, sessionId);
      const { input, persistence } = begin(message, options);
      sessionRuns.set(input.runId, memory);
      const handle = launch(input, persistence);
      followSignal(handle, options.signal);
      live.add(handle);
      void handle.settled.then(() => {
        live.delete(handle);
        sessionRuns.delete(input.runId);
      });
      return handle;
    },
  };
  const live = new Set<AgentRun>();
  const stopAll = (): void => {
    // A run that already reached a final state is only settling (persisting, remembering).
    for (const handle of live) if (handle.actor.getSnapshot().status === 'active') handle.cancel('agent stopped');
    breakers?.stopAll();
  };
  const agent: Agent<TOutput> = {
    id: agentId,
    events$: entries$,
    tokens$: bus.tokens$,
    journal,
    tools: registry.names,
    model: { provider: settings.provider, name: settings.modelName ?? settings.provider.defaultModel },
    run: (task, options) =>
      rejected(() => {
        if (durable !== undefined) {
          if (options?.signal === undefined) return durable.run(durableTask(task, options), options ?? {});
          const queued = durable.start(durableTask(task, options), options);
          followSignal(queued, options.signal);
          return queued.result;
        }
        const handle = start(task, options);
        live.add(handle);
        void handle.settled.then(() => live.delete(handle));
        // A run that ended with an answer has its `output` checked against the schema by the loop.
        return handle.result as Promise<AgentResult<TOutput>>;
      }) as Promise<AgentResult<TOutput>>,
    call: (prompt, options) =>
      rejected(() => {
        if (durable !== undefined) return durable.start(prompt, options ?? {}, 'call').result;
        const handle = start(prompt, options, 'call');
        live.add(handle);
        void handle.settled.then(() => live.delete(handle));
        return handle.result;
      }),
    traces,
    session: (id) => openSession(sessionHost, id),
    experiences: experiences?.api,
    prepare: (task, options) => (durable === undefined ? prepare(task, options) : durable.prepare(durableTask(task, options), options ?? {})),
    start(task, options) {
      if (durable !== undefined) {
        const queued = durable.start(durableTask(task, options), options ?? {});
        followSignal(queued, options?.signal);
        return queued;
      }
      const handle = start(task, options);
      live.add(handle);
      void handle.settled.then(() => live.delete(handle));
      return handle;
    },
    resume(runId, options) {
      if (durable !== undefined) return durable.follow(runId);
      const handle = resume(runId, options);
      live.add(handle);
      void handle.settled.then(() => live.delete(handle));
      return handle;
    },
    handle(runId) {
      for (const handle of live) if (handle.runId === runId) return handle;
      return undefined;
    },
    record(runId, event) {
      const run = runs.get(runId);
      if (run === undefined) return false;
      run.emit(event);
      return true;
    },
    deadLetters: () => executor.deadLetters.list(),
    async close() {
      stopAll();
      await mcp?.close();
    },
    stop: stopAll,
  };
  return agent;
}

/** A tool's image the chat formats take, within the image size limit. */
function sendable(part: ImagePart, limits: ContentLimits | undefined): boolean {
  try {
    checkParts([part], { vision: true, ...limits });
    return true;
  } catch {
    return false;
  }
}

/** A durable runtime keeps tasks as text in its database: parts are not available there yet. */
function durableTask(task: TaskInput, options: RunOptions | undefined): string {
  const history = options?.history ?? [];
  const media = history.some((message) => (message.role === 'user' && mediaParts(message.content) > 0) || (message.role === 'tool' && (message.parts?.length ?? 0) > 0));
  if (typeof task === 'string' && !media) return task;
  throw new ConfigurationError('Images and files in a task or its history are not available with `runtime` yet: run the agent in process, or send text.');
}

/** Cancel the run when `signal` aborts (at once when it already has); the listener goes when the run ends. */
function followSignal(handle: AgentRun, signal: AbortSignal | undefined): void {
  if (signal === undefined) return;
  const cancel = (): void => handle.cancel(`the run's signal was aborted${signal.reason instanceof Error ? `: ${signal.reason.message}` : ''}`);
  if (signal.aborted) {
    cancel();
    return;
  }
  signal.addEventListener('abort', cancel, { once: true });
  void handle.settled.then(() => signal.removeEventListener('abort', cancel));
}

/** A promise rejected with what `run` threw: `agent.run` reports every failure through its promise. */
function rejected<T>(run: () => Promise<T>): Promise<T> {
  try {
    return run();
  } catch (error) {
    return Promise.reject(error);
  }
}

/** What `first` injects (the experiences' system text, the agent's own context), then what `then` does. */
function alongside(first: Hydrator | undefined, then: Hydrator | undefined): Hydrator | undefined {
  if (first === undefined || then === undefined) return first ?? then;
  return async (input, context) => {
    const [a, b] = await Promise.all([first(input, context), then(input, context)]);
    const shown = [...(a.experiences ?? []), ...(b.experiences ?? [])];
    return { inject: [...a.inject, ...b.inject], ...(shown.length === 0 ? {} : { experiences: shown }) };
  };
}

const isSessionStore = (value: SessionStore | { readonly dir?: string }): value is SessionStore => typeof (value as { open?: unknown }).open === 'function';

/** While a skill that names tools is active, only those tools (and `skill`) are offered and allowed. */
function skillToolView(skills: readonly Skill[]): ToolView {
  return (messages) => {
    const skill = activeSkill(messages, skills);
    if (skill?.tools === undefined) return undefined;
    return { allows: (tool) => allowedTools(skill, [tool]).length === 1, why: `the skill "${skill.name}" is active (it allows ${skill.tools.length === 0 ? 'no other tools' : skill.tools.join(', ')})` };
  };
}

function stripPerTool(options: AgentSettings['breakers']): Partial<BreakerOptions> | undefined {
  if (options === undefined || options === false) return undefined;
  const { perTool: _perTool, ...rest } = options;
  return rest;
}
