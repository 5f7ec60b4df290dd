import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseToolArguments, unknownToolObservation } from '../../src/tools/arguments.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { createToolRegistry } from '../../src/tools/registry.ts';
import type { Tool } from '../../src/tools/types.ts';

const add = defineTool({
  name: 'add',
  description: 'Add two numbers',
  input: z.object({ a: z.number(), b: z.number(), note: z.string().optional() }),
  execute: ({ a, b }) => a + b,
});

function failure(raw: string, tool: Tool = add) {
  const result = parseToolArguments(tool, raw);
  if (result.ok) throw new Error(`expected ${JSON.stringify(raw)} to fail`);
  return result;
}

describe('parseToolArguments', () => {
  it('returns the validated value', () => {
    expect(parseToolArguments(add, '{"a": 1, "b": 2}')).toEqual({ ok: true, value: { a: 1, b: 2 } });
  });

  it('applies schema defaults', () => {
    const search = defineTool({
      name: 'search',
      description: 'Search',
      input: z.object({ query: z.string(), limit: z.number().default(5) }),
      execute: () => [],
    });
    expect(parseToolArguments(search, '{"query":"x"}')).toEqual({ ok: true, value: { query: 'x', limit: 5 } });
  });

  describe('invalid JSON', () => {
    it.each([
      ['empty', ''],
      ['whitespace', ' \n\t '],
      ['truncated', '{"a": 1, "b": '],
      ['prose', 'Sure! I will add 1 and 2 for you.'],
      ['a code fence', '```json\n{"a":1,"b":2}\n```'],
      ['null', 'null'],
      ['an array', '[1, 2]'],
      ['a number', '42'],
      ['a string', '"a=1,b=2"'],
    ])('refuses %s and asks for one JSON object', (_label, raw) => {
      const result = failure(raw);
      expect(result.code).toBe('invalid_json');
      expect(result.issues).toEqual([]);
      expect(result.observation).toContain('Invalid arguments for tool "add"');
      expect(result.observation).toContain('exactly one JSON object');
      expect(result.observation).toContain('Parameters: a (required), b (required), note.');
    });

    it('says what kind of JSON it got', () => {
      expect(failure('[]').observation).toContain('expected a JSON object, got an array');
      expect(failure('null').observation).toContain('got null');
      expect(failure('').observation).toContain('the arguments were empty');
      expect(failure('{"a":').observation).toContain('not valid JSON');
    });

    it('tells a tool without parameters to send {}', () => {
      const now = defineTool({ name: 'now', description: 'Time', input: z.object({}), execute: () => Date.now() });
      expect(failure('', now).observation).toContain('send {}');
    });
  });

  describe('invalid arguments', () => {
    it('lists each issue as path: message', () => {
      const result = failure('{"a": "1"}');
      expect(result.code).toBe('invalid_arguments');
      expect(result.issues).toEqual([
        { path: 'a', message: 'Invalid input: expected number, received string', code: 'invalid_type' },
        { path: 'b', message: 'Invalid input: expected number, received undefined', code: 'invalid_type' },
      ]);
      expect(result.observation).toBe(
        'Invalid arguments for tool "add":\n' +
          '- a: Invalid input: expected number, received string\n' +
          '- b: Invalid input: expected number, received undefined\n' +
          'Fix these and call "add" again.',
      );
    });

    it('refuses extra keys and names the allowed ones', () => {
      const result = failure('{"a": 1, "b": 2, "c": 3}');
      expect(result.issues).toEqual([{ path: '(root)', message: 'unknown key "c"; remove it (allowed: a, b, note)', code: 'unrecognized_keys' }]);
    });

    it('formats nested paths', () => {
      const tool = defineTool({
        name: 'batch',
        description: 'Batch',
        input: z.object({ items: z.array(z.object({ 'weird key': z.string(), name: z.string() })) }),
        execute: () => 0,
      });
      const result = failure('{"items": [{"weird key": "x", "name": "ok"}, {"weird key": 1, "name": "ok"}]}', tool);
      expect(result.issues.map((issue) => issue.path)).toEqual(['items[1]["weird key"]']);
    });

    it('bounds the observation for a hostile payload', () => {
      const keys = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}${'x'.repeat(100)}`, i]));
      const result = failure(JSON.stringify({ a: 1, b: 2, ...keys }));
      expect(result.observation.length).toBeLessThan(1_500);
      expect(result.observation).toContain('and 9995 more');
    });

    it('caps the number of issues and the length of each message', () => {
      const tool = defineTool({
        name: 'list',
        description: 'List',
        input: z.object({ values: z.array(z.number().refine(() => false, 'bad '.repeat(500))) }),
        execute: () => 0,
      });
      const result = failure(JSON.stringify({ values: Array.from({ length: 1000 }, (_, i) => i) }), tool);
      expect(result.issues).toHaveLength(10);
      expect(result.issues.every((issue) => issue.message.length <= 241)).toBe(true);
      expect(result.observation).toContain('…and 990 more issues');
      expect(result.observation.length).toBeLessThan(4_000);
    });

    it('escapes control characters and truncates long keys from the model', () => {
      const result = failure(JSON.stringify({ a: 1, b: 2, [`evil\u0000\n${'y'.repeat(500)}`]: 1 }));
      const [issue] = result.issues;
      expect(issue?.message).toContain('"evil\\u0000\\n');
      expect(issue?.message).not.toContain('\u0000');
      expect(issue?.message.length).toBeLessThan(200);
    });
  });

  describe('prototype pollution', () => {
    it('refuses a top-level __proto__ key and pollutes nothing', () => {
      const result = failure('{"__proto__": {"polluted": true}, "a": 1, "b": 2}');
      expect(result.code).toBe('invalid_arguments');
      expect(result.issues).toEqual([{ path: '__proto__', message: 'the key "__proto__" is not allowed; remove it', code: 'reserved_key' }]);
      expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    });

    it('refuses a nested or escaped __proto__ key even for loose schemas', () => {
      const loose = defineTool({
        name: 'loose',
        description: 'Loose',
        input: z.object({ meta: z.record(z.string(), z.unknown()) }).loose(),
        execute: (input) => input,
      });
      const result = failure('{"meta": {"list": [{"\\u005f_proto__": {"polluted": true}}]}}', loose);
      expect(result.issues[0]?.path).toBe('meta.list[0].__proto__');
      expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
      expect(Object.prototype).not.toHaveProperty('polluted');
    });

    it('passes constructor and prototype keys to the schema as plain data', () => {
      const result = parseToolArguments(add, '{"a": 1, "b": 2, "constructor": {"prototype": {"polluted": true}}}');
      expect(result.ok).toBe(false);
      expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    });
  });
});

describe('unknownToolObservation', () => {
  const registry = createToolRegistry([add]);

  it.each(['__proto__', 'constructor', 'toString'])('reports %s as not found and lists the tools', (name) => {
    expect(unknownToolObservation(name, registry)).toBe(
      `Tool "${name}" not found. Available tools: add. Call one of them by its exact name.`,
    );
  });

  it('suggests a tool that differs in case, punctuation or a namespace prefix', () => {
    const tools = createToolRegistry([add, defineTool({ name: 'search_web', description: 'S', input: z.object({}), execute: () => '' })]);
    expect(unknownToolObservation('ADD', tools)).toContain('Did you mean "add"?');
    expect(unknownToolObservation('search-web', tools)).toContain('Did you mean "search_web"?');
    expect(unknownToolObservation('functions.search_web', tools)).toContain('Did you mean "search_web"?');
    expect(unknownToolObservation('delete_all', tools)).not.toContain('Did you mean');
  });

  it('truncates and escapes the requested name', () => {
    const text = unknownToolObservation(`x\u001b[31m"\n${'y'.repeat(10_000)}`, registry);
    expect(text.length).toBeLessThan(200);
    expect(text).toContain('"x\\u001b[31m\\"\\n');
    expect(text).toContain('…"');
  });

  it('caps the list of available names', () => {
    const many = createToolRegistry(
      Array.from({ length: 100 }, (_, i) => defineTool({ name: `tool_${i}`, description: 'T', input: z.object({}), execute: () => i })),
    );
    const text = unknownToolObservation('nope', many);
    expect(text).toContain('tool_29 (and 70 more)');
    expect(text).not.toContain('tool_30,');
  });

  it('says when no tools are available', () => {
    expect(unknownToolObservation('add', createToolRegistry([]))).toContain('no tools are available');
  });
});
