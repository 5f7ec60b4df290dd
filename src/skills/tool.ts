/** The result starts with a marker line naming the skill: that is how `activeSkill` finds it in the conversation. */
import { z } from 'zod';
import { ConfigurationError } from '../core/errors.ts';
import { defineTool } from '../tools/defineTool.ts';
import type { Tool } from '../tools/types.ts';
import { SkillNotFoundError } from './errors.ts';
import type { Skill } from './skill.ts';

/** Also what `allowedTools` always keeps, so the model can switch skills. */
export const SKILL_TOOL = 'skill';

export function skillMarker(name: string): string {
  return `[SKILL ${name}]`;
}

const MARKER = /^\[SKILL ([A-Za-z0-9_-]{1,64})\](?:\r?\n|$)/;

export function skillNameOfResult(content: string): string | undefined {
  return MARKER.exec(content)?.[1];
}

const Input = z.object({
  name: z.string().trim().min(1).max(200).describe('The skill name, as listed under skills in the system prompt.'),
});

/**
 * The skills are the user's own files, so the tool is trusted; an unknown name throws `SkillNotFoundError`, an observation listing the names.
 * @example
 * ```ts
 * createAgent({ model, tools: [...myTools, createSkillTool((await loadSkills()).skills)] });
 * ```
 */
export function createSkillTool(skills: readonly Skill[]): Tool<z.infer<typeof Input>, string> {
  if (!Array.isArray(skills)) throw new ConfigurationError('createSkillTool takes the array of skills from loadSkills().');
  const byName = new Map<string, Skill>();
  for (const skill of skills) {
    if (byName.has(skill.name)) {
      throw new ConfigurationError(`createSkillTool: two skills are named "${skill.name}" (${byName.get(skill.name)?.file} and ${skill.file}); pass each name once.`);
    }
    byName.set(skill.name, skill);
  }
  const names = [...byName.keys()];
  return defineTool({
    name: SKILL_TOOL,
    description:
      'Load a skill: the step-by-step procedure for a kind of task, by its name from the system prompt. ' +
      'Load it before following it. Loading another skill replaces the active one.',
    input: Input,
    execute: ({ name }) => {
      const skill = byName.get(name);
      if (skill === undefined) throw new SkillNotFoundError(name, names);
      return `${skillMarker(skill.name)}\n${skill.body}`;
    },
  });
}
