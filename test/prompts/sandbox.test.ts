/**
 * A prompt template is text with holes, not a program: it reads no files and reaches no
 * JavaScript object beyond the own properties of its values.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Liquid } from 'liquidjs';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigurationError } from '../../src/core/errors.ts';
import { definePrompt } from '../../src/prompts/definePrompt.ts';

describe('prompt templates are sandboxed', () => {
  // A real file next to the working directory, where Liquid's default root would find it.
  const dir = mkdtempSync(join(process.cwd(), '.prompt-include-'));
  const secret = join(dir, 'secret.liquid');
  writeFileSync(secret, 'TOP-SECRET-CONTENT');
  const relative = `${basename(dir)}/secret.liquid`;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('would be read by a default Liquid engine (the control)', () => {
    expect(new Liquid().parseAndRenderSync(`{% include '${relative}' %}`)).toBe('TOP-SECRET-CONTENT');
  });

  it.each([
    `{% include '${relative}' %}`,
    `{% include '${secret}' %}`,
    `{% render '${relative}' %}`,
    `{% render '${secret}' %}`,
    `{% layout '${relative}' %}`,
    `{% include path %}`,
    `{% include '../${basename(process.cwd())}/${relative}' %}`,
  ])('cannot read a file with %s', (template) => {
    const prompt = definePrompt(`before ${template} after`, z.object({ path: z.string() }));
    let output: string;
    try {
      output = prompt.render({ path: secret });
    } catch (error) {
      expect(error).toMatchObject({ code: 'prompt_render_failed' });
      expect((error as Error).message).toMatch(/^Prompt template failed to render at line 1, column 8: ENOENT/);
      expect((error as Error).message).not.toContain('TOP-SECRET');
      return;
    }
    expect.unreachable(`rendered ${JSON.stringify(output)}`);
  });

  it.each([
    '{{ name.constructor }}',
    '{{ name.constructor.constructor }}',
    '{{ name.__proto__ }}',
    '{{ name.toString }}',
    '{{ constructor }}',
    '{{ process }}',
    '{{ globalThis }}',
    "{% assign c = name.constructor %}{{ c }}",
    "{% assign key = 'constructor' %}{{ name[key] }}",
    '{{ items.__proto__.constructor }}',
  ])('reaches no JavaScript object through %s', (template) => {
    const prompt = definePrompt(template, z.object({ name: z.string(), items: z.array(z.string()) }));
    expect(() => prompt.render({ name: 'n', items: ['a'] })).toThrow(expect.objectContaining({ code: 'prompt_render_failed' }));
  });

  it('leaves filters on prototype members empty rather than exposing functions', () => {
    const prompt = definePrompt("[{{ items | map: 'constructor' | join: ',' }}]", z.object({ items: z.array(z.object({ a: z.string() })) }));
    expect(prompt.render({ items: [{ a: 'x' }] })).toBe('[]');
  });

  it('has no tag that evaluates code', () => {
    expect(() => definePrompt('{% eval 1 + 1 %}', z.object({}))).toThrow(ConfigurationError);
    expect(() => definePrompt('{{ "x" | eval }}', z.object({}))).toThrow(ConfigurationError);
  });
});
