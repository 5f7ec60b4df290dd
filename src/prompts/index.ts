/** `actorloop/prompts`: Liquid prompt templates with zod-validated variables, and a system prompt of named sections. */
export { definePrompt } from './definePrompt.ts';
export type { Prompt } from './definePrompt.ts';
export { composeSystemPrompt, defaultSections, SYSTEM_PROMPT_SECTIONS } from './systemPrompt.ts';
export type { PromptSection, SystemPromptSection, SystemPromptSectionName, SystemPromptSections } from './systemPrompt.ts';
export { PromptError } from './errors.ts';
export type { PromptVariableIssue } from './errors.ts';
