import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigurationError } from '../../src/core/errors.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { createToolRegistry } from '../../src/tools/registry.ts';
import type { Tool } from '../../src/tools/types.ts';

const add = defineTool({
  name: 'add',
  description: 'Add',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});
const echo = defineTool({ name: 'echo', description: 'Echo', input: z.object({ text: z.string() }), execute: ({ text }) => text });

describe('tool registry', () => {
  it('looks tools up by exact name and lists names and specs in order', () => {
    const registry = createToolRegistry([add, echo]);
    expect(registry.get('add')).toBe(add);
    expect(registry.has('echo')).toBe(true);
    expect(registry.get('Add')).toBeUndefined();
    expect(registry.names).toEqual(['add', 'echo']);
    expect(registry.specs).toEqual([add.spec, echo.spec]);
    expect(registry.tools).toEqual([add, echo]);
    expect(registry.size).toBe(2);
  });

  it('computes specs once', () => {
    const registry = createToolRegistry([add]);
    expect(registry.specs).toBe(registry.specs);
    expect(registry.specs[0]).toBe(add.spec);
    expect(Object.isFrozen(registry.specs)).toBe(true);
  });

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', ''])(
    'treats %j as an unknown name',
    (name) => {
      const registry = createToolRegistry([add]);
      expect(registry.get(name)).toBeUndefined();
      expect(registry.has(name)).toBe(false);
    },
  );

  it('returns undefined for non-string names from untyped callers', () => {
    const registry = createToolRegistry([add]);
    expect(registry.get(42 as unknown as string)).toBeUndefined();
    expect(registry.has(null as unknown as string)).toBe(false);
  });

  it('rejects duplicate names with both positions', () => {
    const again = defineTool({ name: 'add', description: 'Another add', input: z.object({}), execute: () => 0 });
    expect(() => createToolRegistry([add, echo, again])).toThrow(ConfigurationError);
    expect(() => createToolRegistry([add, echo, again])).toThrow(/#0 and #2 are both named "add"/);
  });

  it('rejects values that are not tools', () => {
    expect(() => createToolRegistry([null as unknown as Tool])).toThrow(/not a tool object/);
    expect(() => createToolRegistry([{ ...add, name: 'bad name' }])).toThrow(/invalid name/);
    expect(() => createToolRegistry([{ ...add, name: 'other' }])).toThrow(/matching spec/);
    expect(() => createToolRegistry('add' as unknown as Tool[])).toThrow(ConfigurationError);
  });

  it('accepts an empty list', () => {
    const registry = createToolRegistry([]);
    expect(registry.size).toBe(0);
    expect(registry.specs).toEqual([]);
  });
});
