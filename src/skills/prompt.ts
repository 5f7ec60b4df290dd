/** Names and descriptions only: bodies load on demand through the `skill` tool, so many skills cost the prompt little. */
import type { Skill } from './skill.ts';
import { SKILL_TOOL } from './tool.ts';

/**
 * `''` when there are no skills.
 * @example
 * ```ts
 * composeSystemPrompt({ ...defaultSections, skills: skillsPromptSection(skills) });
 * ```
 */
export function skillsPromptSection(skills: readonly Skill[]): string {
  if (skills.length === 0) return '';
  const lines = skills.map((skill) => `- ${skill.name} — ${skill.description}`);
  return [
    `Skills are written procedures for particular tasks. Before following one, call the \`${SKILL_TOOL}\` tool with its name to load it. The skills:`,
    ...lines,
  ].join('\n');
}
