/**
 * `actorloop/errors`: one table lists every error code with its blame, its class and its
 * meaning; classes exist only where that table names them, and every one is exported. Read from
 * the declarations and the source: the type system already refuses a code missing from the
 * table, these checks keep the table, the classes, the exports and the README in step.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import * as errors from '../src/errors.ts';
import * as testing from '../src/testing/index.ts';
import { ERROR_CODES, type ErrorCode } from '../src/core/errorCodes.ts';
import { StoreError } from '../src/persistence/errors.ts';
import { RunLimitError } from '../src/agent/errors.ts';
import type { LoopResult } from '../src/core/run.ts';

function sources(dir = 'src'): { path: string; text: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [{ path, text: readFileSync(path, 'utf8') }] : [];
  });
}

/** Every error class declared under src (classes extending …Error). */
function declaredClasses(): string[] {
  return sources().flatMap(({ text }) => [...text.matchAll(/^(?:export )?(?:abstract )?class (\w+) extends \w*Error\b/gm)].map((m) => m[1] as string));
}

const codes = Object.keys(ERROR_CODES) as ErrorCode[];
const tableClasses = new Set<string>(codes.map((code) => ERROR_CODES[code].class));

describe('the error code table', () => {
  it('gives every code a snake_case name, a blame, a class and a one-line meaning', () => {
    expect(codes.length).toBeGreaterThan(80);
    for (const code of codes) {
      const row = ERROR_CODES[code];
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(['user', 'model', 'provider', 'tool', 'runtime'], code).toContain(row.blame);
      expect(row.meaning, code).toMatch(/^[A-Z`a-z].{10,}\.$/);
      expect(row.meaning, code).not.toContain('\n');
    }
  });

  it('names exactly the error classes the source declares, at most 35 with the base', () => {
    const declared = declaredClasses();
    expect(declared.filter((name, i) => declared.indexOf(name) !== i)).toEqual([]);
    expect(new Set(declared)).toEqual(new Set(['ActorloopError', ...tableClasses]));
    expect(declared.length).toBeLessThanOrEqual(35);
  });

  it('holds every code the source throws, and no code the source never uses', () => {
    const rest = [...sources(), ...sources('machines')].filter(({ path }) => !path.endsWith(join('core', 'errorCodes.ts')));
    const code = rest.map(({ text }) => text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, ''));
    const thrown = code.flatMap((text) => [...text.matchAll(/(?:super|new \w+Error)\(\s*'([a-z_]+)'/g)].map((m) => m[1] as string));
    expect(thrown.length).toBeGreaterThan(20);
    expect(thrown.filter((code) => !(code in ERROR_CODES))).toEqual([]);
    const all = rest.map(({ text }) => text).join('\n');
    // A code built from a template (`${store}_store_locked`) is still spelled out by its store's caller.
    const unused = codes.filter((code) => !all.includes(`'${code}'`) && !/_store_(locked)$/.test(code));
    expect(unused).toEqual([]);
  });

  it('takes blame from the table, so a class serving several codes reports each code its own blame', () => {
    const locked = new StoreError('run_locked', 'held by another process', { file: '/tmp/x.log' });
    const unsupported = new StoreError('unsupported_version', 'version 9', { file: '/tmp/x.log' });
    expect(locked).toMatchObject({ name: 'StoreError', code: 'run_locked', blame: ERROR_CODES.run_locked.blame, file: '/tmp/x.log' });
    expect(JSON.parse(JSON.stringify(unsupported))).toEqual({ name: 'StoreError', code: 'unsupported_version', blame: 'user', message: 'version 9' });
    const result = { runId: 'run_1' } as LoopResult;
    expect(new RunLimitError('run_timeout', 'too slow', { result })).toMatchObject({ code: 'run_timeout', blame: 'runtime', runId: 'run_1', result });
  });
});

describe('actorloop/errors', () => {
  it('exports every error class (the scripted model\'s from actorloop/testing) and the code table', () => {
    const exported = new Set([...Object.keys(errors), ...Object.keys(testing)]);
    expect([...tableClasses, 'ActorloopError'].filter((name) => !exported.has(name))).toEqual([]);
    expect(Object.keys(errors).filter((name) => /^[A-Z]\w*Error$/.test(name) && !tableClasses.has(name) && name !== 'ActorloopError')).toEqual([]);
    expect(errors.ERROR_CODES).toBe(ERROR_CODES);
  });

  it('has the README name only error classes that exist', () => {
    const readme = readFileSync('README.md', 'utf8');
    const named = new Set([...readme.matchAll(/\b([A-Z][A-Za-z]+Error)\b/g)].map((m) => m[1] as string));
    const ours = new Set([...tableClasses, 'ActorloopError']);
    // Names of the platform and of other libraries the README mentions.
    const foreign = new Set(['TypeError', 'AbortError', 'SyntaxError', 'UnauthorizedError']);
    expect([...named].filter((name) => !ours.has(name) && !foreign.has(name))).toEqual([]);
  });
});

describe('npm run lint', () => {
  const lint = async (filePath: string, code: string) => (await new ESLint().lintText(code, { filePath }))[0]?.messages.map((m) => m.message) ?? [];
  const probe = "import { ActorloopError } from '../core/errors.ts';\n";

  it(
    'refuses an error class missing from the table, and one outside an errors.ts file',
    async () => {
      expect(await lint('src/tools/errors.ts', `${probe}export class ToolCrashedError extends ActorloopError {}\n`)).toEqual([
        expect.stringContaining('No new error classes'),
      ]);
      expect(await lint('src/tools/runTool.ts', `${probe}export class ToolError extends ActorloopError {}\n`)).toEqual([
        expect.stringContaining('live in an errors.ts file'),
      ]);
      expect(await lint('src/tools/errors.ts', `${probe}export class ToolError extends ActorloopError {}\n`)).toEqual([]);
    },
    60_000,
  );
});
