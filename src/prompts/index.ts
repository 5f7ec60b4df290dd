/**
 * `actorloop/prompts`: Liquid prompt templates with zod-validated variables, and a layered
 * system-prompt composer with named sections.
 *
 * @example
 * ```ts
 * import { composeSystemPrompt, defaultSections, definePrompt } from 'actorloop/prompts';
 * const role = definePrompt('You review pull requests for {{ repo }}.', z.object({ repo: z.string() }));
 * const system = composeSystemPrompt({ ...defaultSections, role: { prompt: role, values: { repo: 'actorloop' } } });
 * ```
 */
export { definePrompt } from './definePrompt.ts';
export type { Prompt } from './definePrompt.ts';
export { composeSystemPrompt, defaultSections, SYSTEM_PROMPT_SECTIONS } from './systemPrompt.ts';
export type { PromptSection, SystemPromptSection, SystemPromptSectionName, SystemPromptSections } from './systemPrompt.ts';
export { PromptError } from './errors.ts';
export type { PromptVariableIssue } from './errors.ts';
