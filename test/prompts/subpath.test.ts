/**
 * What `actorloop/prompts` exports, and that its errors are the ones on `actorloop/errors`. (That
 * the subpath resolves in an installed package is test/package.test.ts's job.)
 */
import { describe, expect, it } from 'vitest';
import * as errors from '../../src/errors.ts';

describe('actorloop/prompts', () => {
  it('exports the prompt API and the errors actorloop/errors has', async () => {
    const prompts = await import('../../src/prompts/index.ts');
    expect(Object.keys(prompts).sort()).toEqual(
      ['PromptError', 'SYSTEM_PROMPT_SECTIONS', 'composeSystemPrompt', 'defaultSections', 'definePrompt'].sort(),
    );
    expect(prompts.PromptError).toBe(errors.PromptError);
  });
});
