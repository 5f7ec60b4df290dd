/**
 * `actorloop/prompts` is a package subpath, and its errors are on `actorloop/errors`.
 */
import { describe, expect, it } from 'vitest';
import * as errors from '../../src/errors.ts';

describe('actorloop/prompts', () => {
  it('resolves through the package exports', async () => {
    const prompts = await import('actorloop/prompts');
    expect(Object.keys(prompts).sort()).toEqual(
      ['PromptRenderError', 'PromptVariablesError', 'SYSTEM_PROMPT_SECTIONS', 'composeSystemPrompt', 'defaultSections', 'definePrompt'].sort(),
    );
    expect(prompts.PromptVariablesError).toBe(errors.PromptVariablesError);
    expect(prompts.PromptRenderError).toBe(errors.PromptRenderError);
  });
});
