import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { parseToolArguments } from '../../src/tools/arguments.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { createToolRegistry } from '../../src/tools/registry.ts';
import type { Tool, ToolContext } from '../../src/tools/types.ts';

describe('defineTool types', () => {
  it('infers execute input from the zod schema', () => {
    const double = defineTool({
      name: 'double',
      description: 'Double a number',
      input: z.object({ a: z.number() }),
      execute: ({ a }) => {
        expectTypeOf(a).toEqualTypeOf<number>();
        return a * 2;
      },
    });
    expectTypeOf(double).toEqualTypeOf<Tool<{ a: number }, number>>();
  });

  it('infers optional fields, defaults (present after parsing) and the context type', () => {
    defineTool({
      name: 'search',
      description: 'Search',
      input: z.object({ query: z.string(), limit: z.number().default(5), site: z.string().optional() }),
      execute: (input, context) => {
        expectTypeOf(input).toEqualTypeOf<{ query: string; limit: number; site?: string | undefined }>();
        expectTypeOf(context).toEqualTypeOf<ToolContext>();
        return input.query;
      },
    });
  });

  it('unwraps an async result and follows transforms', () => {
    const fetchTool = defineTool({
      name: 'fetch',
      description: 'Fetch',
      input: z.object({ url: z.string() }).transform((value) => new URL(value.url)),
      execute: async (url) => {
        expectTypeOf(url).toEqualTypeOf<URL>();
        return url.hostname;
      },
    });
    expectTypeOf(fetchTool).toEqualTypeOf<Tool<URL, string>>();
  });

  it('rejects execute bodies that use fields the schema lacks', () => {
    defineTool({
      name: 'add',
      description: 'Add',
      input: z.object({ a: z.number() }),
      // @ts-expect-error — `b` is not in the schema
      execute: ({ b }) => b,
    });
  });

  it('lets a registry hold differently typed tools without any', () => {
    const add = defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number() }), execute: ({ a }) => a });
    const echo = defineTool({ name: 'echo', description: 'Echo', input: z.object({ s: z.string() }), execute: ({ s }) => s });
    const registry = createToolRegistry([add, echo]);
    expectTypeOf(registry.get('add')).toEqualTypeOf<Tool | undefined>();
    const parsed = parseToolArguments(add, '{"a":1}');
    if (parsed.ok) expectTypeOf(parsed.value).toEqualTypeOf<{ a: number }>();
  });
});
