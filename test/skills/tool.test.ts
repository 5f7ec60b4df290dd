import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.ts';
import { createSkillTool, SKILL_TOOL } from '../../src/skills/tool.ts';
import { skillsPromptSection } from '../../src/skills/prompt.ts';
import type { Skill } from '../../src/skills/skill.ts';
import { callThroughExecutor } from './support.ts';

const release: Skill = { name: 'release', description: 'Cut a release', tools: ['git_*'], body: '1. Update the changelog.\n2. Tag it.', file: '/p/release.md', source: 'project' };
const review: Skill = { name: 'review', description: 'Review a pull request', body: 'Read the diff first.', file: '/u/review.md', source: 'user' };

describe('skillsPromptSection', () => {
  it('lists each skill as "name — description" after one line telling the model to load a skill with the skill tool', () => {
    expect(skillsPromptSection([release, review])).toBe(
      'Skills are written procedures for particular tasks. Before following one, call the `skill` tool with its name to load it. The skills:\n' +
        '- release — Cut a release\n' +
        '- review — Review a pull request',
    );
  });

  it('is empty without skills, so the section is dropped', () => {
    expect(skillsPromptSection([])).toBe('');
  });
});

describe('the skill tool', () => {
  it('returns the skill body after a [SKILL <name>] marker line', async () => {
    const [, result] = await callThroughExecutor(createSkillTool([release, review]), { name: 'release' });
    expect(result.isError).toBeUndefined();
    expect(result.content).toBe('[SKILL release]\n1. Update the changelog.\n2. Tag it.');
  });

  it('answers an unknown name with an error observation that lists the available names', async () => {
    const [, result] = await callThroughExecutor(createSkillTool([release, review]), { name: 'relase' });
    expect(result.isError).toBe(true);
    expect(result.content).toBe('SkillNotFoundError: There is no skill "relase". Call skill again with one of: release, review. [code: skill_not_found]');
  });

  it('says no skills are loaded when asked for one with none', async () => {
    const [, result] = await callThroughExecutor(createSkillTool([]), { name: 'release' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('no skills are loaded');
  });

  it('is named skill, takes { name }, and is trusted, side-effect free, idempotent and unconfirmed', () => {
    const tool = createSkillTool([release]);
    expect(tool.name).toBe(SKILL_TOOL);
    expect(tool.spec.parameters).toMatchObject({ type: 'object', required: ['name'], additionalProperties: false });
    expect({ untrusted: tool.untrusted, sideEffects: tool.sideEffects, idempotent: tool.idempotent, requiresConfirmation: tool.requiresConfirmation, permissions: tool.permissions }).toEqual({
      untrusted: undefined,
      sideEffects: undefined,
      idempotent: true,
      requiresConfirmation: false,
      permissions: [],
    });
  });

  it('refuses two skills with the same name', () => {
    expect(() => createSkillTool([release, { ...review, name: 'release' }])).toThrow(ConfigurationError);
  });
});
