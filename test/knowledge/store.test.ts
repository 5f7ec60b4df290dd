import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.ts';
import type { NewKnowledgeItem } from '../../src/knowledge/item.ts';
import { createMemoryKnowledgeStore } from '../../src/knowledge/store.ts';

const fact = (subject: string, predicate: string, object: string, extra: Partial<NewKnowledgeItem> = {}): NewKnowledgeItem => ({
  subject,
  predicate,
  object,
  confidence: 0.9,
  scope: 'fact',
  ...extra,
});

const geography = [
  fact('France', 'has capital', 'Paris'),
  fact('Germany', 'has capital', 'Berlin'),
  fact('Earth', 'has', 'one moon'),
  fact('Paris', 'is on the river', 'Seine'),
];

describe('knowledge store search', () => {
  it('ranks the item that answers the query first, with a relevance in [0, 1]', () => {
    const store = createMemoryKnowledgeStore(geography);
    const results = store.search('What is the capital of France?');
    expect(results[0]?.item.object).toBe('Paris');
    for (const r of results) expect(r.relevance).toBeGreaterThanOrEqual(0);
    for (const r of results) expect(r.relevance).toBeLessThanOrEqual(1);
    expect(results.map((r) => r.relevance)).toEqual([...results.map((r) => r.relevance)].sort((a, b) => b - a));
  });

  it('gives a partial match a lower relevance than a full one', () => {
    const store = createMemoryKnowledgeStore(geography);
    const [france, germany] = ['Paris', 'Berlin'].map((o) => store.search('capital of France').find((r) => r.item.object === o));
    expect(france?.relevance).toBeGreaterThan(0.6);
    expect(germany?.relevance).toBeLessThan(0.3);
  });

  it('finds nothing for a query that shares no term with any item', () => {
    const store = createMemoryKnowledgeStore(geography);
    expect(store.search('write a haiku about the sea')).toEqual([]);
    expect(store.search('the of and')).toEqual([]);
  });

  it('applies limit, minRelevance and filter', () => {
    const store = createMemoryKnowledgeStore(geography);
    expect(store.search('capital Paris France Germany', { limit: 2 })).toHaveLength(2);
    expect(store.search('capital of France', { minRelevance: 0.3 }).map((r) => r.item.object)).toEqual(['Paris']);
    expect(store.search('capital', { filter: (item) => item.subject === 'Germany' }).map((r) => r.item.object)).toEqual(['Berlin']);
  });

  it('matches plurals and prefixes of longer words', () => {
    const store = createMemoryKnowledgeStore(geography);
    expect(store.search('How many moons does Earth have?')[0]?.item.object).toBe('one moon');
    expect(store.search('capit')[0]?.item.predicate).toBe('has capital');
  });

  it('keeps relevance independent of how many unrelated items the store holds', async () => {
    const small = createMemoryKnowledgeStore(geography);
    const big = createMemoryKnowledgeStore(geography);
    for (let i = 0; i < 200; i++) await big.add(fact(`item${i}`, 'mentions', `unrelated topic number${i}`));
    const a = small.search('capital of France')[0]?.relevance ?? 0;
    const b = big.search('capital of France')[0]?.relevance ?? 0;
    expect(Math.abs(a - b)).toBeLessThan(0.1);
  });

  it('treats a term in more than a quarter of 50+ items as a stop word when the query has rarer ones', async () => {
    const store = createMemoryKnowledgeStore();
    for (let i = 0; i < 60; i++) await store.add(fact('code', 'should', `follow rule${i}`));
    await store.add(fact('code', 'should', 'validate input with zod'));
    // "code" is in every item: the rarer "zod" decides, and no item matches on "code" alone.
    expect(store.search('code zod').map((r) => r.item.object)).toEqual(['validate input with zod']);
    expect(store.search('code zod')[0]?.relevance).toBeGreaterThan(0.5);
    // A query made only of common terms still finds what it asks for.
    expect(store.search('code', { limit: 3 })).toHaveLength(3);
  });

  it('never treats terms as common in a small store', async () => {
    const store = createMemoryKnowledgeStore([fact('code', 'should', 'use zod'), fact('code', 'should', 'avoid any')]);
    expect(store.search('code zod')).toHaveLength(2);
  });

  it('always reports relevance within [0, 1] (property)', () => {
    const word = fc.constantFrom('alpha', 'beta', 'gamma', 'delta', 'moons', 'France', 'capital', 'the', 'ActorloopError', '首都');
    const text = fc.array(word, { minLength: 1, maxLength: 6 }).map((w) => w.join(' '));
    fc.assert(
      fc.property(fc.array(fc.tuple(text, text, text), { minLength: 1, maxLength: 8 }), text, (items, query) => {
        const store = createMemoryKnowledgeStore(items.map(([s, p, o]) => fact(s, p, o)));
        for (const r of store.search(query)) {
          if (!(r.relevance >= 0 && r.relevance <= 1)) return false;
        }
        return true;
      }),
      { numRuns: 200 },
    );
  });

  it('rejects a limit or minRelevance out of range with a ConfigurationError', () => {
    const store = createMemoryKnowledgeStore(geography);
    expect(() => store.search('x', { limit: -1 })).toThrow(ConfigurationError);
    expect(() => store.search('x', { minRelevance: 2 })).toThrow(ConfigurationError);
  });
});

describe('knowledge store changes', () => {
  it('refreshes an item that says the same thing instead of duplicating it', async () => {
    const store = createMemoryKnowledgeStore();
    const first = await store.add(fact('Earth', 'has', 'one moon', { confidence: 0.5 }));
    const again = await store.add(fact('earth', 'HAS', '  one   moon ', { confidence: 0.95 }));
    expect(store.size).toBe(1);
    expect(again.id).toBe(first.id);
    expect(store.get(first.id)?.confidence).toBe(0.95);
  });

  it('keeps the same content twice when it applies in two places', async () => {
    const store = createMemoryKnowledgeStore();
    await store.add(fact('errors', 'use', 'typed errors', { scope: 'conventions', directory: 'src/api' }));
    await store.add(fact('errors', 'use', 'typed errors', { scope: 'conventions', directory: 'src/db' }));
    expect(store.size).toBe(2);
  });

  it('normalises directory and language when adding', async () => {
    const store = createMemoryKnowledgeStore();
    const item = await store.add(fact('x', 'y', 'z', { directory: './src/api/', language: ' TypeScript ' }));
    expect(item).toMatchObject({ directory: 'src/api', language: 'typescript' });
  });

  it('removes the items `replace` selects in the same change', async () => {
    const store = createMemoryKnowledgeStore(geography);
    await store.add(fact('France', 'has capital', 'Paris (since 987)'), { replace: (i) => i.subject === 'France' });
    expect(store.items().filter((i) => i.subject === 'France').map((i) => i.object)).toEqual(['Paris (since 987)']);
    expect(store.search('Paris').some((r) => r.item.object === 'Paris')).toBe(false);
  });

  it('removes an item from the items and from search', async () => {
    const store = createMemoryKnowledgeStore(geography);
    const paris = store.search('capital of France')[0]?.item;
    expect(await store.remove(paris?.id ?? '')).toBe(true);
    expect(await store.remove(paris?.id ?? '')).toBe(false);
    expect(store.search('capital of France').some((r) => r.item.id === paris?.id)).toBe(false);
  });

  it('rejects an invalid item with a ConfigurationError naming the field', async () => {
    const store = createMemoryKnowledgeStore();
    await expect(store.add(fact('Earth', 'has', 'one moon', { confidence: 1.5 }))).rejects.toThrow(/confidence/);
    await expect(store.add(fact('  ', 'has', 'one moon'))).rejects.toBeInstanceOf(ConfigurationError);
    expect(store.size).toBe(0);
  });

  it('returns frozen items, so callers cannot change what the index holds', async () => {
    const store = createMemoryKnowledgeStore();
    const item = await store.add(fact('Earth', 'has', 'one moon'));
    expect(Object.isFrozen(item)).toBe(true);
  });

  it('refuses changes once closed', async () => {
    const store = createMemoryKnowledgeStore();
    await store.close();
    await expect(store.add(fact('Earth', 'has', 'one moon'))).rejects.toMatchObject({ code: 'knowledge_store_closed' });
  });
});
