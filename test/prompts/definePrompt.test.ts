/**
 * definePrompt: parse once, validate values with the schema, render synchronously, and name
 * whatever is missing, mistyped or undeclared.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigurationError } from '../../src/core/errors.ts';
import { definePrompt } from '../../src/prompts/definePrompt.ts';
import type { PromptError } from '../../src/prompts/errors.ts';

/** The error `fn` throws (fails the test when it does not throw). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('definePrompt', () => {
  const review = definePrompt(
    'Review {{ repo }} for {% for f in focus %}{{ f }}{% unless forloop.last %}, {% endunless %}{% endfor %}. Owner: {{ owner.name | upcase }}.',
    z.object({ repo: z.string(), focus: z.array(z.string()), owner: z.object({ name: z.string() }) }),
  );

  it('renders values, with tags and filters, as plain text', () => {
    expect(review.render({ repo: 'a<b>&c', focus: ['tests', 'docs'], owner: { name: 'ada' } })).toBe('Review a<b>&c for tests, docs. Owner: ADA.');
    expect(review.template).toContain('{{ repo }}');
  });

  it('renders with the parsed values: defaults apply and absent optional variables are empty', () => {
    const prompt = definePrompt(
      '{{ tone }}{% if note %} ({{ note }}){% endif %}[{{ note }}]',
      z.object({ tone: z.string().default('calm'), note: z.string().optional() }),
    );
    expect(prompt.render({})).toBe('calm[]');
    expect(prompt.render({ tone: 'dry', note: 'n' })).toBe('dry (n)[n]');
  });

  it('names a missing variable', () => {
    const error = thrown(() => review.render({ repo: 'r', focus: [] } as never));
    expect(error).toMatchObject({ code: 'prompt_variables_invalid' });
    const { code, blame, issues, message } = error as PromptError;
    expect({ code, blame }).toEqual({ code: 'prompt_variables_invalid', blame: 'user' });
    expect(issues.map((issue) => issue.path)).toEqual(['owner']);
    expect(message).toMatch(/owner \(.*expected object, received undefined\)/);
  });

  it('names a mistyped variable by its path', () => {
    const error = thrown(() => review.render({ repo: 42, focus: ['x', 7], owner: { name: null } } as never)) as PromptError;
    expect(error).toMatchObject({ code: 'prompt_variables_invalid' });
    expect(error.issues.map((issue) => issue.path)).toEqual(['repo', 'focus[1]', 'owner.name']);
    expect(error.message).toContain('repo (Invalid input: expected string, received number)');
    expect(error.message).toContain('focus[1] (');
    expect(error.message).toContain('owner.name (');
    expect(error.toJSON()).toMatchObject({ code: 'prompt_variables_invalid', issues: error.issues });
  });

  it('names a variable the template references but the schema does not declare', () => {
    const prompt = definePrompt('Hello {{ name }},\n{{ nmae }}', z.object({ name: z.string() }));
    const error = thrown(() => prompt.render({ name: 'Ada' })) as PromptError;
    expect(error).toMatchObject({ code: 'prompt_render_failed' });
    expect({ code: error.code, blame: error.blame, variable: error.variable }).toEqual({ code: 'prompt_render_failed', blame: 'user', variable: 'nmae' });
    expect(error.message).toContain('"nmae" at line 2, column 4');
    // Extra values are stripped by z.object, so they cannot stand in for an undeclared variable.
    expect(() => prompt.render({ name: 'Ada', nmae: 'x' } as never)).toThrow(expect.objectContaining({ code: 'prompt_render_failed' }));
  });

  it('refuses an unknown filter and a syntax error at definition, with line and column', () => {
    const filter = thrown(() => definePrompt('ok\n{{ name | shout }}', z.object({ name: z.string() })));
    expect(filter).toBeInstanceOf(ConfigurationError);
    expect((filter as Error).message).toBe('Prompt template does not parse at line 2, column 1: undefined filter: shout.');
    expect(() => definePrompt('Hi {{ name', z.object({ name: z.string() }))).toThrow(/line 1, column 4: output "\{\{ name" not closed/);
    expect(() => definePrompt('{% frobnicate %}', z.object({}))).toThrow(ConfigurationError);
  });

  it('refuses a schema that is not a zod schema', () => {
    expect(() => definePrompt('x', { parse: () => ({}) } as never)).toThrow(ConfigurationError);
  });

  it('inserts any string value verbatim, never as template syntax', () => {
    const prompt = definePrompt('<{{ a }}|{{ b }}>', z.object({ a: z.string(), b: z.string() }));
    const syntax = fc.constantFrom('{{', '}}', '{%', '%}', '{{ a }}', '{% raw %}', '{% include "x" %}', '{{- b -}}', '\u0000', '&lt;');
    const text = fc.array(fc.oneof(syntax, fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' })), { maxLength: 8 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, text, (a, b) => {
        expect(prompt.render({ a, b })).toBe(`<${a}|${b}>`);
      }),
    );
  });
});
