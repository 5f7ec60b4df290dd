import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { ConfigurationError } from '../core/errors.ts';
import type { ContentPart, Message } from '../core/messages.ts';
import { checkParts, taskContent, type TaskInput } from '../conversation/parts.ts';
import { assertMessages } from '../conversation/validate.ts';
import { EventBus, tokenDeltas } from '../events/eventBus.ts';
import { reportingOnce } from '../events/subscriberErrors.ts';
import { MemoryJournal } from '../events/memoryJournal.ts';
import { createKnowledge } from '../knowledge/wiring.ts';
import { createFileBlobStore, createMemoryBlobStore, type BlobStore } from '../persistence/blobs.ts';
import { createStuckGuard } from '../progress/stuckGuard.ts';
import { createRedactor } from '../security/redactor.ts';
import { createSkillTool } from '../skills/index.ts';
import { traceEvents } from '../telemetry/index.ts';
import { createTraces } from '../traces/query.ts';
import type { RunContext } from '../run/context.ts';
import { createAgentLogic } from './agentLogic.ts';
import { resolveConfig, type AgentConfig, type AgentSettings } from './config.ts';
import { createExperienceMemory } from './experiences.ts';
import { createHookRunner } from './hooks.ts';
import { createRuns, followSignal } from './runs.ts';
import { agentSessions } from './session.ts';
import { createTooling } from './tooling.ts';
import type { Agent, AgentResult, AgentRun, BoundRuntime, DurableTask, RunOptions } from './types.ts';
import { defined } from '../core/defined.ts';
import { answerSpec } from './structuredAnswer.ts';

export type { AgentConfig, ModelConfig } from './config.ts';
export type { Agent, AgentResult, AgentRun, PreparedRun, ResumeRunOptions, RunOptions } from './types.ts';

/**
 * @example
 * ```ts
 * const agent = createAgent({ model: openAICompatible(), tools: [add], limits: { maxIterations: 10 } });
 * const result = await agent.run('What is 6 * 7?');
 * ```
 */
export function createAgent<TOutput = unknown>(config: AgentConfig<TOutput>): Agent<TOutput> {
  const settings = resolveConfig(config as AgentConfig);
  const { model, observe, memory } = settings;
  const agentId = settings.id ?? `agent_${randomUUID().slice(0, 8)}`;
  const knowledge = settings.knowledge === undefined ? undefined : createKnowledge(settings.knowledge);
  const ownTools = [...settings.tools, ...(knowledge?.tools ?? []), ...(memory.skills === undefined ? [] : [createSkillTool(memory.skills)])];
  const redactor = createRedactor(settings.policy.redact);
  // A durable runtime calls the model and the tools through itself: each call is recorded before the run sees it.
  const durable = settings.runtime?.bind({
    agentId,
    provider: model.provider,
    tools: ownTools,
    redact: redactor.deep,
    redactCopy: redactor.copy,
    ...(settings.output === undefined ? {} : { output: answerSpec(settings.output, true).spec }),
    redactStream: () => redactor.stream(),
    tool: async (name) => {
      if (tooling.mcp !== undefined && !tooling.mcp.has(name)) await tooling.mcp.sync();
      return tooling.registry.get(name);
    },
    start: (task, options, mode) => runs.start(task, options, mode),
    ...(model.vision ? { images: { vision: true as const, ...settings.context.content } } : {}),
    resume: (runId) => runs.resume(runId),
  });
  const store = durable?.store ?? settings.persistence.store;
  const provider = durable?.provider ?? model.provider;
  const contexts = new Map<string, RunContext>();
  // Images and files of runs: beside the store's runs when there is one (a resume reads them there), else in memory.
  let blobStore: BlobStore | undefined;
  // A durable agent's are in its database, in hand while a worker steps the run.
  const blobs = (): BlobStore => (blobStore ??= durable?.blobs ?? (store === undefined ? createMemoryBlobStore() : createFileBlobStore(join(store.dir, 'blobs'))));
  const tooling = createTooling(settings, { tools: durable?.tools ?? ownTools, provider, durable, redactor, contexts, blobs });
  const bus = new EventBus();
  const hooks = createHookRunner(settings.hooks, redactor.deep);
  const journal = new MemoryJournal(observe.journalCapacity);
  const traces = createTraces({ agentId, journal, ...(durable !== undefined ? { runs: durable.runs } : defined({ store })) });
  bus.attach(journal.write);
  // A durable agent's entries are those its runs committed, wherever they ran.
  const entries$ = durable?.events$ ?? bus.events$;
  if (observe.events !== undefined) entries$.subscribe(reportingOnce(observe.events, 'the observe.events handler'));
  if (observe.telemetry !== undefined) traceEvents(entries$, observe.telemetry === true ? {} : observe.telemetry);
  const stuckGuard = createStuckGuard(settings.resilience.stuckDetection);
  const modelName = model.name ?? model.provider.defaultModel;
  const { experiences: learning } = memory;
  const experiences = learning === undefined ? undefined : createExperienceMemory(learning, { model: model.provider, ...defined({ modelName: model.name }), tools: () => tooling.registry.names, traces, redact: redactor.deep });
  const logicDeps = { agentId, provider, ...tooling, redactor, hooks, knowledge, experiences, stuckGuard, durable, blobs };
  // With a store every run records its hydrate reply, so a resume never depends on whether it has a hydrator.
  const { machine, system } = createAgentLogic(settings, { ...logicDeps, recordsHydrate: store?.mode === 'resumable' });
  const host = { bus, journal, stuckGuard, ...defined({ knowledge, hooks, experiences }) };
  const runs = createRuns({ agentId, settings, system, machine, tools: tooling.registry, redactor, store, breakers: tooling.breakers, blobs, contexts, host });
  const sessions = agentSessions(memory.sessions, { redactor, hasSystem: system !== undefined, runs, durable });
  return {
    id: agentId,
    events$: entries$,
    // A durable agent's deltas come from whichever worker makes its runs' model calls.
    tokens$: durable === undefined ? bus.tokens$ : tokenDeltas(entries$),
    journal,
    tools: tooling.registry.names,
    model: { provider: model.provider, name: modelName },
    run: (task, options) =>
      rejected(() => {
        if (durable === undefined) return runs.track(runs.start(task, options)).result as Promise<AgentResult<TOutput>>;
        return (options?.signal === undefined ? durable.run(durableTask(task, options, settings), options ?? {}) : queue(durable, task, options, settings).result) as Promise<AgentResult<TOutput>>;
      }),
    call: (prompt, options) => rejected(() => (durable === undefined ? runs.track(runs.start(prompt, options, 'call')) : durable.start(durableTask(prompt, options, settings), options ?? {}, 'call')).result),
    traces,
    session: sessions.open,
    experiences: experiences?.api,
    prepare: (task, options) => (durable === undefined ? runs.prepare(task, options) : durable.prepare(durableTask(task, options, settings), options ?? {})),
    start: (task, options) => (durable === undefined ? runs.track(runs.start(task, options)) : queue(durable, task, options, settings)),
    resume: (runId, options) => (durable === undefined ? runs.track(runs.resume(runId, options)) : durable.follow(runId)),
    handle: runs.find,
    record: runs.record,
    deadLetters: () => tooling.executor.deadLetters.list(),
    stop: runs.stop,
    async close() {
      runs.stop();
      await tooling.mcp?.close();
    },
  };
}

function queue(durable: BoundRuntime, task: TaskInput, options: RunOptions | undefined, settings: AgentSettings): AgentRun {
  return followSignal(durable.start(durableTask(task, options, settings), options ?? {}), options?.signal);
}

/** Parts are checked here, as a run in process checks them, before the runtime stores their bytes with the queued run. */
function durableTask(task: TaskInput, options: RunOptions | undefined, settings: AgentSettings): DurableTask {
  if (typeof task === 'string' && options?.history === undefined) return task;
  const content = typeof task === 'string' || Array.isArray(task) ? taskContent(task) : undefined;
  if (content === undefined) throw new ConfigurationError('A run needs a non-empty task: a string, or an array of text and parts (image(...), file(...)).');
  const limits = { vision: settings.model.vision, ...settings.context.content };
  if (typeof content !== 'string') checkParts(content, limits);
  if (options?.history !== undefined) checkParts(historyParts(assertMessages(options.history)), limits);
  return content;
}

const historyParts = (messages: readonly Message[]): ContentPart[] =>
  messages.flatMap((message) => (message.role === 'user' && typeof message.content !== 'string' ? message.content : message.role === 'tool' ? (message.parts ?? []) : []));

/** `agent.run` reports every failure through its promise, a throw while starting too. */
function rejected<T>(run: () => Promise<T>): Promise<T> {
  try {
    return run();
  } catch (error) {
    return Promise.reject(error);
  }
}
