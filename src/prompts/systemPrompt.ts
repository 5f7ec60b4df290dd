/**
 * A layered system prompt: named sections in a fixed order, so a user replaces or drops one by
 * name without rewriting (or reordering) the others.
 */
import { ConfigurationError } from '../core/errors.ts';
import type { Prompt } from './definePrompt.ts';

/** The section names, in the order they are rendered. */
export const SYSTEM_PROMPT_SECTIONS = ['base', 'role', 'tools', 'skills', 'experiences', 'knowledge'] as const;
export type SystemPromptSectionName = (typeof SYSTEM_PROMPT_SECTIONS)[number];

/** A `definePrompt` result with the values to render it with (validated when composed). */
export interface PromptSection {
  readonly prompt: Prompt;
  readonly values: unknown;
}

/** Text, a prompt with its values, or `false`/`null`/`undefined` to leave the section out. */
export type SystemPromptSection = string | PromptSection | false | null | undefined;
export type SystemPromptSections = Partial<Record<SystemPromptSectionName, SystemPromptSection>>;

/**
 * Short defaults for `base` and `tools`; spread them and override or drop by name.
 *
 * @example
 * ```ts
 * composeSystemPrompt({ ...defaultSections, role: 'You review pull requests.' });
 * ```
 */
export const defaultSections = {
  base:
    'You are an agent that works in a loop: reason about the task, call a tool when you need a fact or an action, ' +
    'read its result, and repeat until you can answer. Answer as soon as you have what you need.',
  tools:
    'Use a tool only when you need it, one fact or action per call, and read each result before the next call. ' +
    'When a tool fails, say so; never invent its result.',
} as const satisfies SystemPromptSections;

/**
 * Render the given sections in the fixed order base, role, tools, skills, experiences,
 * knowledge, each trimmed, joined by a blank line. Empty and dropped (`false`, `null`) sections
 * are skipped; an unknown section name or value is a `ConfigurationError`. A prompt section is
 * rendered with its values, so it throws `PromptError` (`prompt_variables_invalid`) when they do not fit.
 *
 * @example
 * ```ts
 * const skills = definePrompt('Skills: {{ skills | join: ", " }}.', z.object({ skills: z.array(z.string()) }));
 * const system = composeSystemPrompt({
 *   ...defaultSections,
 *   role: 'You review pull requests.',
 *   tools: false, // this agent has none
 *   skills: { prompt: skills, values: { skills: ['TypeScript', 'XState'] } },
 * });
 * const agent = createAgent({ model, system });
 * ```
 */
export function composeSystemPrompt(sections: SystemPromptSections): string {
  if (typeof sections !== 'object' || sections === null) {
    throw new ConfigurationError(`composeSystemPrompt needs an object of sections (${SYSTEM_PROMPT_SECTIONS.join(', ')}).`);
  }
  const allowed: ReadonlySet<string> = new Set(SYSTEM_PROMPT_SECTIONS);
  for (const name of Object.keys(sections)) {
    if (!allowed.has(name)) {
      throw new ConfigurationError(`Unknown system prompt section "${name}"; the sections are ${SYSTEM_PROMPT_SECTIONS.join(', ')}.`);
    }
  }
  return SYSTEM_PROMPT_SECTIONS.map((name) => renderSection(name, sections[name]).trim())
    .filter((text) => text !== '')
    .join('\n\n');
}

function renderSection(name: SystemPromptSectionName, section: unknown): string {
  if (section === undefined || section === null || section === false) return '';
  if (typeof section === 'string') return section;
  if (isPromptSection(section)) return section.prompt.render(section.values);
  throw new ConfigurationError(
    `System prompt section "${name}" must be a string, { prompt, values } with a definePrompt result, or false/null to drop it.`,
  );
}

function isPromptSection(value: unknown): value is PromptSection {
  if (typeof value !== 'object' || value === null || !('prompt' in value) || !('values' in value)) return false;
  const prompt = value.prompt;
  return typeof prompt === 'object' && prompt !== null && 'render' in prompt && typeof prompt.render === 'function';
}
