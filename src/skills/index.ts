/**
 * Skills: markdown files that teach an agent a procedure. Front matter names the skill, says
 * when to use it and may list the tools it allows; the body is the procedure. The system prompt
 * lists the skills, the model loads one with the `skill` tool, and while it is active the agent
 * offers only the tools it allows.
 *
 * @example
 * ```ts
 * import { activeSkill, allowedTools, createSkillTool, loadSkills, skillsPromptSection } from './skills/index.ts';
 * const { skills, problems } = await loadSkills();
 * for (const p of problems) console.warn(`${p.file}:${p.line ?? 1}: ${p.message}`);
 * const system = composeSystemPrompt({ ...defaultSections, skills: skillsPromptSection(skills) });
 * const tools = [...myTools, createSkillTool(skills)];
 * // Before each model call:
 * const visible = allowedTools(activeSkill(messages, skills), tools.map((t) => t.name));
 * ```
 */
export { parseSkill, SKILL_NAME_PATTERN, SkillFrontMatter } from './skill.ts';
export type { ParsedSkill, Skill, SkillProblem, SkillSource } from './skill.ts';
export { loadSkills } from './load.ts';
export type { LoadedSkills, LoadSkillsOptions } from './load.ts';
export { skillsPromptSection } from './prompt.ts';
export { createSkillTool, SKILL_TOOL, skillMarker, skillNameOfResult } from './tool.ts';
export { activeSkill, allowedTools } from './active.ts';
export { SkillNotFoundError } from './errors.ts';
