export { parseSkill, SKILL_NAME_PATTERN, SkillFrontMatter } from './skill.ts';
export type { ParsedSkill, Skill, SkillProblem, SkillSource } from './skill.ts';
export { loadSkills } from './load.ts';
export type { LoadedSkills, LoadSkillsOptions } from './load.ts';
export { skillsPromptSection } from './prompt.ts';
export { createSkillTool, SKILL_TOOL, skillMarker, skillNameOfResult } from './tool.ts';
export { activeSkill, allowedTools } from './active.ts';
export { SkillNotFoundError } from './errors.ts';
