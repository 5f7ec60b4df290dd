import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigurationError } from '../../src/core/errors.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import type { ToolContext } from '../../src/tools/types.ts';

const context: ToolContext = {
  signal: new AbortController().signal,
  toolCallId: 'call_1',
  idempotencyKey: 'run_1:call_1',
  runId: 'run_1',
  agentId: 'agent_1',
};

const base = { description: 'Add two numbers', input: z.object({ a: z.number(), b: z.number() }), execute: () => 0 };

function configurationMessage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return (error as ConfigurationError).message;
  }
  throw new Error('expected a ConfigurationError');
}

describe('defineTool', () => {
  it('builds a frozen tool with metadata defaults', () => {
    const add = defineTool({ name: 'add', ...base, execute: ({ a, b }) => a + b });
    expect(add.name).toBe('add');
    expect(add.permissions).toEqual([]);
    expect(add.verified).toBe(false);
    expect(add.requiresConfirmation).toBe(false);
    expect(add.idempotent).toBe(true);
    expect(add.timeoutMs).toBeUndefined();
    expect(Object.isFrozen(add)).toBe(true);
    expect(add.execute({ a: 2, b: 3 }, context)).toBe(5);
  });

  it('keeps declared metadata and marks [verified] descriptions as verified', () => {
    const tool = defineTool({
      name: 'write_file',
      description: 'Write a file [verified]',
      input: z.object({ path: z.string() }),
      execute: () => undefined,
      permissions: ['fs.write'],
      requiresConfirmation: true,
      idempotent: false,
      timeoutMs: 5_000,
      recovery: { kind: 'escalate' },
    });
    expect(tool).toMatchObject({
      permissions: ['fs.write'],
      verified: true,
      requiresConfirmation: true,
      idempotent: false,
      timeoutMs: 5_000,
      recovery: { kind: 'escalate' },
    });
    expect(defineTool({ name: 'x', ...base, verified: true }).verified).toBe(true);
  });

  describe('definition validation', () => {
    it.each([
      ['a space', 'add numbers'],
      ['a dot', 'math.add'],
      ['empty', ''],
      ['65 characters', 'a'.repeat(65)],
    ])('rejects a name with %s', (_label, name) => {
      expect(configurationMessage(() => defineTool({ name, ...base }))).toMatch(/1–64 characters/);
    });

    it('accepts a 64-character name with dashes and underscores', () => {
      expect(defineTool({ name: `a-_${'b'.repeat(61)}`, ...base }).name).toHaveLength(64);
    });

    it('rejects an empty or blank description', () => {
      expect(configurationMessage(() => defineTool({ name: 'add', ...base, description: '  ' }))).toMatch(/description is empty/);
    });

    it('rejects an input that is not a zod schema', () => {
      const input = { type: 'object' } as unknown as z.ZodObject;
      expect(configurationMessage(() => defineTool({ name: 'add', ...base, input }))).toMatch(/zod schema/);
    });

    it('rejects a non-object input schema and says how to wrap it', () => {
      const message = configurationMessage(() => defineTool({ name: 'echo', ...base, input: z.string() }));
      expect(message).toMatch(/named arguments/);
      expect(message).toMatch(/JSON type "string"/);
      expect(message).toContain('z.object({ value: yourSchema })');
    });

    it('rejects a top-level union', () => {
      const input = z.union([z.object({ a: z.number() }), z.object({ b: z.number() })]);
      expect(configurationMessage(() => defineTool({ name: 'u', ...base, input }))).toMatch(/union or other non-object/);
    });

    it('rejects schemas JSON Schema cannot express and names the alternative', () => {
      const message = configurationMessage(() => defineTool({ name: 'when', ...base, input: z.object({ at: z.date() }) }));
      expect(message).toMatch(/cannot be expressed as JSON Schema/);
      expect(message).toContain('z.iso.datetime()');
    });

    it('rejects a missing execute, bad permissions and a bad timeout', () => {
      const noExecute = { name: 'add', description: 'd', input: base.input } as unknown as Parameters<typeof defineTool>[0];
      expect(configurationMessage(() => defineTool(noExecute))).toMatch(/execute must be a function/);
      expect(configurationMessage(() => defineTool({ name: 'add', ...base, permissions: [''] }))).toMatch(/permissions/);
      expect(configurationMessage(() => defineTool({ name: 'add', ...base, timeoutMs: 0 }))).toMatch(/timeoutMs/);
      expect(configurationMessage(() => defineTool({ name: 'add', ...base, timeoutMs: Number.NaN }))).toMatch(/timeoutMs/);
    });
  });

  describe('JSON Schema', () => {
    it('is an object schema with required keys, no $schema and additionalProperties false', () => {
      const add = defineTool({ name: 'add', ...base });
      expect(add.spec).toEqual({
        name: 'add',
        description: 'Add two numbers',
        parameters: {
          type: 'object',
          properties: { a: { type: 'number' }, b: { type: 'number' } },
          required: ['a', 'b'],
          additionalProperties: false,
        },
      });
    });

    it('leaves optional and defaulted fields out of required', () => {
      const tool = defineTool({
        name: 'search',
        ...base,
        input: z.object({ query: z.string(), limit: z.number().int().default(5), site: z.string().optional() }),
      });
      expect(tool.spec.parameters.required).toEqual(['query']);
      expect(tool.spec.parameters.properties).toMatchObject({ limit: { type: 'integer', default: 5 }, site: { type: 'string' } });
    });

    it('describes nested objects, enums and field descriptions', () => {
      const tool = defineTool({
        name: 'filter',
        ...base,
        input: z.object({
          filter: z.object({ tag: z.string(), mode: z.enum(['any', 'all']) }).describe('which items'),
          sort: z.enum(['asc', 'desc']).nullable(),
        }),
      });
      const { properties } = tool.spec.parameters as { properties: Record<string, Record<string, unknown>> };
      expect(properties.filter).toMatchObject({
        type: 'object',
        description: 'which items',
        properties: { tag: { type: 'string' }, mode: { type: 'string', enum: ['any', 'all'] } },
        required: ['tag', 'mode'],
      });
      expect(properties.sort).toEqual({ anyOf: [{ type: 'string', enum: ['asc', 'desc'] }, { type: 'null' }] });
    });

    it('adds properties and required for an empty object', () => {
      const tool = defineTool({ name: 'now', ...base, input: z.object({}) });
      expect(tool.spec.parameters).toEqual({ type: 'object', properties: {}, required: [], additionalProperties: false });
    });

    it('is computed once and frozen', () => {
      const tool = defineTool({ name: 'add', ...base });
      expect(tool.spec).toBe(tool.spec);
      expect(Object.isFrozen(tool.spec.parameters)).toBe(true);
      expect(Object.isFrozen(tool.spec.parameters.properties)).toBe(true);
    });
  });

  describe('extra keys', () => {
    it('rejects extra keys that a plain z.object would strip', () => {
      const tool = defineTool({ name: 'add', ...base });
      const result = tool.input.safeParse({ a: 1, b: 2, c: 3 });
      expect(result.success).toBe(false);
      expect(result.error?.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['c'] });
      expect(base.input.safeParse({ a: 1, b: 2, c: 3 }).success).toBe(true); // the caller's schema is untouched
    });

    it('keeps refinements when tightening', () => {
      const input = z.object({ a: z.number() }).refine((value) => value.a > 0, 'a must be positive');
      const tool = defineTool({ name: 'pos', ...base, input });
      expect(tool.input.safeParse({ a: -1 }).error?.issues[0]?.message).toBe('a must be positive');
      expect(tool.input.safeParse({ a: 1, b: 1 }).success).toBe(false);
      expect(tool.input.safeParse({ a: 1 }).success).toBe(true);
    });

    it('tightens the object a transform starts from', async () => {
      const input = z.object({ a: z.number() }).transform((value) => value.a * 10);
      const tool = defineTool({ name: 'scale', ...base, input, execute: (n) => n + 1 });
      expect(tool.input.safeParse({ a: 1, extra: true }).success).toBe(false);
      const parsed = tool.input.parse({ a: 2 });
      expect(await tool.execute(parsed, context)).toBe(21);
      expect(tool.spec.parameters.additionalProperties).toBe(false);
    });

    it('respects an explicit .loose() object', () => {
      const tool = defineTool({ name: 'loose', ...base, input: z.object({ a: z.number() }).loose() });
      expect(tool.input.safeParse({ a: 1, extra: true }).success).toBe(true);
      expect(tool.spec.parameters.additionalProperties).toEqual({});
    });
  });
});
