/** `actorloop/memory`: what an agent carries across runs (knowledge, traces, experiences, skills, sessions). */

export { buildTrace, traceToMermaid } from './traces/index.ts';
export type { Trace, TraceListOptions, TraceStatus, TraceStep, TraceStepType, TraceSummary, Traces } from './traces/index.ts';

export { createMemoryExperienceStore, formatExperiences, learnExperiences, openExperienceStore } from './experiences/index.ts';
export type { Experience, ExperienceCandidate, ExperienceScope, ExperienceStore } from './experiences/index.ts';
export type { AgentExperiences, ExperiencesConfig } from './agent/experiences.ts';

export { createSkillTool, loadSkills, skillsPromptSection } from './skills/index.ts';
export type { LoadedSkills, Skill, SkillProblem } from './skills/index.ts';

export { createMemoryKnowledgeStore, openKnowledgeStore } from './knowledge/index.ts';
export type { KnowledgeConfig, KnowledgeItem, KnowledgeStore } from './knowledge/index.ts';
export { createPreHydrator } from './hydration/index.ts';
export type { PreHydratorOptions } from './hydration/index.ts';

export { createMemorySessionStore, openSessionStore } from './sessions/index.ts';
export type { JsonValue, SessionMemory, SessionStore } from './sessions/index.ts';
export type { Session } from './agent/types.ts';
