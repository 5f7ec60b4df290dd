/**
 * composeSystemPrompt: named sections in a fixed order, overridden or dropped by name.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigurationError } from '../../src/core/errors.ts';
import { definePrompt } from '../../src/prompts/definePrompt.ts';
import { composeSystemPrompt, defaultSections, SYSTEM_PROMPT_SECTIONS } from '../../src/prompts/systemPrompt.ts';

describe('composeSystemPrompt', () => {
  it('renders sections in the fixed order, whatever the order of the keys', () => {
    const system = composeSystemPrompt({ knowledge: 'K', experiences: 'E', skills: 'S', tools: 'T', role: 'R', base: 'B' });
    expect(system).toBe('B\n\nR\n\nT\n\nS\n\nE\n\nK');
    expect(SYSTEM_PROMPT_SECTIONS).toEqual(['base', 'role', 'tools', 'skills', 'experiences', 'knowledge']);
  });

  it('keeps the defaults for base and tools and lets a section be overridden or dropped by name', () => {
    expect(composeSystemPrompt(defaultSections)).toBe(`${defaultSections.base}\n\n${defaultSections.tools}`);
    expect(composeSystemPrompt({ ...defaultSections, role: 'You review pull requests.' })).toBe(
      `${defaultSections.base}\n\nYou review pull requests.\n\n${defaultSections.tools}`,
    );
    expect(composeSystemPrompt({ ...defaultSections, role: 'You review pull requests.', tools: false })).toBe(
      `${defaultSections.base}\n\nYou review pull requests.`,
    );
    expect(composeSystemPrompt({ ...defaultSections, base: 'Be brief.', tools: null })).toBe('Be brief.');
  });

  it('skips empty sections and trims the rest', () => {
    expect(composeSystemPrompt({ base: '  B\n', role: '', tools: ' \n ', skills: undefined, knowledge: '\nK' })).toBe('B\n\nK');
    expect(composeSystemPrompt({})).toBe('');
  });

  it('renders a prompt section with its values, and validates them', () => {
    const skills = definePrompt('Skills: {{ skills | join: ", " }}.', z.object({ skills: z.array(z.string()) }));
    expect(composeSystemPrompt({ base: 'B', skills: { prompt: skills, values: { skills: ['TypeScript', 'XState'] } } })).toBe(
      'B\n\nSkills: TypeScript, XState.',
    );
    expect(composeSystemPrompt({ skills: { prompt: skills, values: { skills: [] } } })).toBe('Skills: .');
    expect(() => composeSystemPrompt({ skills: { prompt: skills, values: { skills: 'TypeScript' } } })).toThrow(expect.objectContaining({ code: 'prompt_variables_invalid' }));
  });

  it('refuses an unknown section name, naming the allowed ones', () => {
    expect(() => composeSystemPrompt({ ...defaultSections, persona: 'x' } as never)).toThrow(ConfigurationError);
    expect(() => composeSystemPrompt({ persona: 'x' } as never)).toThrow(
      'Unknown system prompt section "persona"; the sections are base, role, tools, skills, experiences, knowledge.',
    );
  });

  it('refuses a section value it cannot render', () => {
    expect(() => composeSystemPrompt({ role: 42 } as never)).toThrow(/section "role" must be a string/);
    expect(() => composeSystemPrompt({ role: true } as never)).toThrow(ConfigurationError);
    expect(() => composeSystemPrompt(null as never)).toThrow(ConfigurationError);
  });
});
