/**
 * `actorloop/memory`: what an agent carries across runs. Traces (every run read back from its
 * journal as a step DAG, drawn as Mermaid), experiences (learned rules with success rates),
 * skills (markdown procedures loaded on demand) and sessions (conversations that go on across
 * runs and processes). Each is given to `createAgent({ memory })` or read from an agent.
 *
 * @example
 * ```ts
 * import { loadSkills, openExperienceStore, traceToMermaid } from 'actorloop/memory';
 * const agent = createAgent({
 *   model,
 *   memory: { skills: await loadSkills(), experiences: { store: await openExperienceStore() }, sessions: { dir: '.actorloop/sessions' } },
 *   persistence: { store: createFileStore() },
 * });
 * const session = await agent.session('support-42');
 * const result = await session.run('My order has not arrived.');
 * console.log(traceToMermaid((await agent.traces.get(result.runId))!));
 * ```
 */

// Traces
export { buildTrace, traceToMermaid } from './traces/index.ts';
export type { Trace, TraceListOptions, TraceStatus, TraceStep, TraceStepType, TraceSummary, Traces } from './traces/index.ts';

// Experiences
export { createMemoryExperienceStore, formatExperiences, learnExperiences, openExperienceStore } from './experiences/index.ts';
export type { Experience, ExperienceCandidate, ExperienceScope, ExperienceStore } from './experiences/index.ts';
export type { AgentExperiences, ExperiencesConfig } from './agent/experiences.ts';

// Skills
export { createSkillTool, loadSkills, skillsPromptSection } from './skills/index.ts';
export type { LoadedSkills, Skill, SkillProblem } from './skills/index.ts';

// Knowledge, and what a run is given from it before it starts
export { createMemoryKnowledgeStore, openKnowledgeStore } from './knowledge/index.ts';
export type { KnowledgeConfig, KnowledgeItem, KnowledgeStore } from './knowledge/index.ts';
export { createPreHydrator } from './hydration/index.ts';
export type { PreHydratorOptions } from './hydration/index.ts';

// Sessions
export { createMemorySessionStore, openSessionStore } from './sessions/index.ts';
export type { JsonValue, SessionMemory, SessionStore } from './sessions/index.ts';
export type { Session } from './agent/types.ts';
