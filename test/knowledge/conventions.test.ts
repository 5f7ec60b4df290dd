import { describe, expect, it } from 'vitest';
import { resolveConventions } from '../../src/knowledge/conventions.ts';
import type { NewKnowledgeItem } from '../../src/knowledge/item.ts';
import { createMemoryKnowledgeStore } from '../../src/knowledge/store.ts';

const convention = (object: string, where: { directory?: string; language?: string }, confidence = 0.8): NewKnowledgeItem => ({
  subject: 'code',
  predicate: 'should',
  object,
  confidence,
  scope: 'conventions',
  // One timestamp for all: ties keep insertion order instead of depending on the clock.
  createdAt: 1_000,
  ...where,
});

function repo() {
  return createMemoryKnowledgeStore([
    convention('use typescript language rules everywhere', { language: 'typescript' }),
    convention('prefer anyhow for errors in rust', { language: 'rust' }),
    convention('keep ESM imports with .ts extensions', { directory: '' }),
    convention('write a changelog entry per change', {}),
    convention('validate every request body with zod', { directory: 'src/api' }),
    convention('one handler per file', { directory: 'src/api/handlers' }),
    convention('never import from src/api', { directory: 'src/db' }),
    convention('use the logger, not console', { directory: 'src' }),
    { subject: 'code', predicate: 'should', object: 'one handler per file', confidence: 0.9, scope: 'fact', directory: 'src/api/handlers' },
  ]);
}

describe('resolveConventions', () => {
  it('resolves the directory, then each parent, then the root, then the language level', () => {
    const found = resolveConventions(repo(), { directory: 'src/api/handlers', query: 'typescript', limit: 20 });
    expect(found.map((c) => [c.level, c.item.object])).toEqual([
      ['directory', 'one handler per file'],
      ['parent', 'validate every request body with zod'],
      ['parent', 'use the logger, not console'],
      ['root', 'keep ESM imports with .ts extensions'],
      ['root', 'write a changelog entry per change'],
      ['language', 'use typescript language rules everywhere'],
    ]);
  });

  it('never applies a sibling directory or an unrelated language', () => {
    const objects = resolveConventions(repo(), { directory: 'src/api/handlers', query: 'typescript', limit: 20 }).map((c) => c.item.object);
    expect(objects).not.toContain('never import from src/api');
    expect(objects).not.toContain('prefer anyhow for errors in rust');
  });

  it('picks the language level from the query', () => {
    const found = resolveConventions(repo(), { directory: 'src/db', query: 'rust', limit: 20 });
    expect(found.filter((c) => c.level === 'language').map((c) => c.item.object)).toEqual(['prefer anyhow for errors in rust']);
  });

  it('ignores items of other scopes, even in the same directory', () => {
    const found = resolveConventions(repo(), { directory: 'src/api/handlers', query: 'handler', limit: 20 });
    expect(found.filter((c) => c.item.object === 'one handler per file')).toHaveLength(1);
    expect(found[0]?.item.scope).toBe('conventions');
  });

  it('keeps a convention repeated at several levels once, at its most specific level', () => {
    const store = createMemoryKnowledgeStore([
      convention('Use Zod at boundaries', { directory: 'src' }),
      convention('use zod at   boundaries', { directory: 'src/api' }),
      convention('use zod at boundaries', { language: 'typescript' }),
    ]);
    const found = resolveConventions(store, { directory: 'src/api', query: 'typescript zod', limit: 10 });
    expect(found.map((c) => [c.level, c.item.directory])).toEqual([['directory', 'src/api']]);
  });

  it('truncates to the limit, keeping the most specific levels', () => {
    const found = resolveConventions(repo(), { directory: 'src/api/handlers', query: 'typescript', limit: 2 });
    expect(found.map((c) => c.level)).toEqual(['directory', 'parent']);
  });

  it('orders conventions within a level by how well the query matches them', () => {
    const store = createMemoryKnowledgeStore([
      convention('name files in kebab case', { directory: 'src' }),
      convention('wrap errors with a literal code', { directory: 'src' }),
    ]);
    expect(resolveConventions(store, { directory: 'src', query: 'errors', limit: 5 }).map((c) => c.item.object)).toEqual([
      'wrap errors with a literal code',
      'name files in kebab case',
    ]);
  });

  it('accepts any spelling of the directory', () => {
    const a = resolveConventions(repo(), { directory: './src/api/handlers/', query: 'x', limit: 3 });
    const b = resolveConventions(repo(), { directory: 'src\\api\\handlers', query: 'x', limit: 3 });
    expect(a.map((c) => c.item.object)).toEqual(b.map((c) => c.item.object));
    expect(a[0]?.item.object).toBe('one handler per file');
  });
});
