/** `actorloop/memory`: what an agent carries across runs (traces, experiences, skills, sessions), given to `createAgent({ memory })`. */

export { buildTrace, traceToMermaid } from './traces/index.ts';
export type { Trace, TraceListOptions, TraceStatus, TraceStep, TraceStepType, TraceSummary, Traces } from './traces/index.ts';

export { createMemoryExperienceStore, formatExperiences, learnExperiences, openExperienceStore } from './experiences/index.ts';
export type { Experience, ExperienceCandidate, ExperienceScope, ExperienceStore } from './experiences/index.ts';
export type { AgentExperiences, ExperiencesConfig } from './agent/experiences.ts';

export { createSkillTool, loadSkills, skillsPromptSection } from './skills/index.ts';
export type { LoadedSkills, Skill, SkillProblem } from './skills/index.ts';

export { createMemorySessionStore, openSessionStore } from './sessions/index.ts';
export type { JsonValue, SessionMemory, SessionStore } from './sessions/index.ts';
export type { Session } from './agent/types.ts';
