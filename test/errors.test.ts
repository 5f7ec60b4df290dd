/**
 * `actorloop/errors` is the one place every error class is exported, each with its own literal
 * code and a blame, so a caller can switch on `code` or `blame` without guessing. Read from the
 * declarations: constructors differ per class, the literals do not.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as errors from '../src/errors.ts';

interface Declared {
  readonly name: string;
  /** The literal codes: one, or a union when one class serves several stores (`code` tells them apart). */
  readonly codes: readonly string[];
  readonly blame: string | undefined;
  readonly abstract: boolean;
}

/** Every error class declared under `dir` (classes extending …Error), with its literal code(s) and blame. */
function declared(dir = 'src'): Declared[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return declared(path);
    if (!entry.name.endsWith('.ts')) return [];
    const text = readFileSync(path, 'utf8');
    return [...text.matchAll(/^(export )?(abstract )?class (\w+) extends \w*Error\b[^{]*\{([\s\S]*?)^\}/gm)].map((m) => ({
      name: m[3] as string,
      codes: literalCodes(m[4] as string),
      blame: /readonly blame = '([^']+)'/.exec(m[4] as string)?.[1],
      abstract: m[2] !== undefined,
    }));
  });
}

/** `readonly code = 'x' as const`, or `readonly code: 'x' | 'y'` set by the constructor. */
function literalCodes(body: string): string[] {
  const single = /readonly code = '([^']+)'/.exec(body)?.[1];
  if (single !== undefined) return [single];
  const union = /readonly code: ('[^']+'(?: \| '[^']+')*);/.exec(body)?.[1];
  return union === undefined ? [] : [...union.matchAll(/'([^']+)'/g)].map((m) => m[1] as string);
}

describe('actorloop/errors', () => {
  const classes = declared();
  const concrete = classes.filter((c) => !c.abstract && c.name !== 'ActorloopError');

  it('gives every concrete error class its own literal code and a blame', () => {
    expect(concrete.length).toBeGreaterThan(40);
    for (const c of concrete) {
      expect(c.codes.length, c.name).toBeGreaterThan(0);
      for (const code of c.codes) expect(code, c.name).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(['user', 'model', 'provider', 'tool', 'runtime'], c.name).toContain(c.blame);
    }
    const codes = concrete.flatMap((c) => c.codes);
    expect(codes.filter((code, i) => codes.indexOf(code) !== i)).toEqual([]);
  });

  it('exports every error class but the scripted model\'s and the command line\'s from actorloop/errors', () => {
    const exported = new Set(Object.keys(errors));
    // The command line's errors end as exit codes; the scripted model's live on actorloop/testing.
    const testing = new Set([...declared('src/testing'), ...declared('src/cli')].map((c) => c.name));
    const internal = new Set(classes.filter((c) => c.abstract && !exported.has(c.name)).map((c) => c.name));
    expect(classes.filter((c) => !exported.has(c.name) && !testing.has(c.name) && !internal.has(c.name)).map((c) => c.name)).toEqual([]);
  });

  it('keeps the knowledge and experience stores\' former error names, as the shared classes', () => {
    expect(errors.KnowledgeStoreLockedError).toBe(errors.StoreLockedError);
    expect(errors.ExperienceStoreLockedError).toBe(errors.StoreLockedError);
    expect(errors.KnowledgeStoreClosedError).toBe(errors.StoreClosedError);
    expect(errors.ExperienceStoreClosedError).toBe(errors.StoreClosedError);
    expect(errors.ExperienceNotFoundError).toBe(errors.StoreItemNotFoundError);
  });
});
