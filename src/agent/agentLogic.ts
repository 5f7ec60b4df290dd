import { getEventListeners } from 'node:events';
import { agentMachine } from '../../machines/agent.machine.ts';
import { phaseRunner } from '../../machines/phaseRunner.ts';
import type { Hydrator, MessagePreparer } from '../core/hooks.ts';
import type { InferenceProvider } from '../core/provider.ts';
import type { Message } from '../core/messages.ts';
import { createContextBudget } from '../context/index.ts';
import { createOverflowCompaction } from '../context/overflow.ts';
import type { Executor } from '../executor/executor.ts';
import { createPreHydrator } from '../hydration/index.ts';
import type { createKnowledge } from '../knowledge/wiring.ts';
import { loadMessageParts, type BlobStore } from '../persistence/blobs.ts';
import { gates } from '../policy/gates.ts';
import { taintPolicy } from '../policy/taint.ts';
import type { StuckGuard } from '../progress/stuckGuard.ts';
import type { Redactor } from '../security/redactor.ts';
import { activeSkill, allowedTools, skillsPromptSection, type Skill } from '../skills/index.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { runOf } from '../run/context.ts';
import { recordedPhases } from '../run/recording.ts';
import type { AgentSettings } from './config.ts';
import type { ExperienceMemory } from './experiences.ts';
import type { ToolView } from './gatePhase.ts';
import type { HookRunner } from './hooks.ts';
import type { LiveTools } from './liveTools.ts';
import { mcpContextHydrator } from './mcpContext.ts';
import { agentPhases } from './runtime.ts';
import { answerSpec } from './structuredAnswer.ts';
import type { BoundRuntime } from './types.ts';
import { defined } from '../core/defined.ts';

export interface LogicDeps {
  readonly agentId: string;
  readonly provider: InferenceProvider;
  readonly registry: ToolRegistry;
  readonly mcp: LiveTools | undefined;
  readonly executor: Executor;
  readonly redactor: Redactor;
  readonly hooks: HookRunner | undefined;
  readonly knowledge: ReturnType<typeof createKnowledge> | undefined;
  readonly experiences: ExperienceMemory | undefined;
  readonly stuckGuard: StuckGuard;
  readonly durable: BoundRuntime | undefined;
  readonly recordsHydrate: boolean;
  readonly blobs: () => BlobStore;
}

/** The agent machine provided with this agent's phases, and the system prompt its runs begin with. */
export function createAgentLogic(settings: AgentSettings, deps: LogicDeps): { machine: typeof agentMachine; system: string | undefined } {
  const { model, context, memory } = settings;
  const { provider, registry, mcp, hooks, redactor } = deps;
  const budget = context.budget;
  // The budget runs last, so it measures what knowledge injected; the user's beforeModelCall sees the result.
  const preparers: readonly MessagePreparer[] = [...(deps.knowledge?.preparers ?? []), ...(budget === undefined ? [] : [createContextBudget(budget)])];
  const reasonDeps = {
    provider,
    tools: registry.specs,
    stream: model.stream,
    redactStream: redactor.stream,
    ...defined({
      model: model.name,
      temperature: model.temperature,
      maxTokens: model.maxTokens,
      reasoningEffort: model.reasoningEffort,
      onLength: model.onLength,
    }),
    ...(preparers.length === 0 ? {} : { preparers }),
    ...defined({ beforeModelCall: hooks?.beforeModelCall }),
    loadParts: (messages: readonly Message[]) => loadMessageParts(messages, deps.blobs()),
    ...(context.compactOnOverflow ? { overflow: createOverflowCompaction(budget) } : {}),
    ...(settings.output === undefined ? {} : { answer: answerSpec(settings.output, provider.supportsStructuredOutput) }),
  };
  const hydrator = alongside(deps.experiences?.hydrator, alongside(ownHydrator(settings), resourceHydrator(settings, mcp)));
  const skills = memory.skills;
  const phases = agentPhases({
    agentId: deps.agentId,
    reasonDeps,
    ...defined({ hydrator }),
    recordsHydrate: deps.recordsHydrate,
    tools: registry,
    ...(mcp === undefined ? {} : { syncTools: mcp.sync }),
    gate: settings.policy.gate ?? gates.permissive(),
    gateTimeoutMs: settings.policy.gateTimeoutMs,
    ...(settings.policy.taint === false ? {} : { taint: taintPolicy(settings.policy.taint) }),
    executor: deps.executor,
    stuckGuard: deps.stuckGuard,
    redactor,
    ...defined({ hooks }),
    ...(skills === undefined ? {} : { toolView: skillToolView(skills) }),
  });
  const recorded = recordedPhases(phases);
  const runner = phaseRunner(deps.durable === undefined ? recorded : deps.durable.phases(recorded), { listening, runOf });
  // Skills are listed after the user's own system prompt; their bodies load on demand.
  const composed = [settings.system ?? '', skills === undefined ? '' : skillsPromptSection(skills)].filter((part) => part !== '').join('\n\n');
  return { machine: agentMachine.provide({ actors: { phases: runner } }), system: composed === '' ? undefined : redactor.text(composed) };
}

/** Whether anything still listens to a phase's signal: if not, the next phase may reuse it. */
const listening = (signal: AbortSignal): boolean => getEventListeners(signal, 'abort').length > 0;

function ownHydrator({ context, tools }: AgentSettings): Hydrator | undefined {
  return context.experimental_hydrator ?? (context.preHydration === undefined ? undefined : createPreHydrator({ tools, ...context.preHydration }));
}

function resourceHydrator({ mcpServers, context }: AgentSettings, mcp: LiveTools | undefined): Hydrator | undefined {
  const names = mcpServers.filter((server) => server.resources === 'context').map((server) => server.name);
  if (mcp === undefined || names.length === 0) return undefined;
  const { maxContextTokens, timeoutMs } = context.preHydration ?? {};
  return mcpContextHydrator(mcp.servers, names, defined({ maxContextTokens, timeoutMs }));
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

/** While a skill that names tools is active, only those tools (and `skill`) are offered and allowed. */
function skillToolView(skills: readonly Skill[]): ToolView {
  return (messages) => {
    const skill = activeSkill(messages, skills);
    if (skill?.tools === undefined) return undefined;
    return { allows: (tool) => allowedTools(skill, [tool]).length === 1, why: `the skill "${skill.name}" is active (it allows ${skill.tools.length === 0 ? 'no other tools' : skill.tools.join(', ')})` };
  };
}
