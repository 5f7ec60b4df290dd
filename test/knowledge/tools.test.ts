import { describe, expect, it } from 'vitest';
import { parseToolArguments } from '../../src/tools/arguments.ts';
import type { NewKnowledgeItem } from '../../src/knowledge/item.ts';
import { createMemoryKnowledgeStore } from '../../src/knowledge/store.ts';
import { createKnowledgeTools, RECALL_KNOWLEDGE, STORE_KNOWLEDGE } from '../../src/knowledge/tools.ts';
import { toolContext } from './support.ts';

const items: NewKnowledgeItem[] = [
  { subject: 'France', predicate: 'has capital', object: 'Paris', confidence: 0.95, scope: 'fact', createdAt: 1 },
  { subject: 'What is the capital of Italy?', predicate: 'answered', object: 'Rome', confidence: 0.5, scope: 'working', createdAt: 2 },
  { subject: 'code', predicate: 'should', object: 'validate input with zod', confidence: 0.8, scope: 'conventions', directory: 'src/api', createdAt: 3 },
  { subject: 'code', predicate: 'should', object: 'avoid any', confidence: 0.8, scope: 'conventions', language: 'typescript', createdAt: 4 },
];

async function call(tool: ReturnType<typeof createKnowledgeTools>[number], args: unknown): Promise<string> {
  const parsed = parseToolArguments(tool, JSON.stringify(args));
  if (!parsed.ok) return `INVALID: ${parsed.observation}`;
  return String(await tool.execute(parsed.value, toolContext()));
}

describe('recall_knowledge', () => {
  it('is a plain ranked search without directory or scope', async () => {
    const [recall] = createKnowledgeTools(createMemoryKnowledgeStore(items));
    expect(recall.name).toBe(RECALL_KNOWLEDGE);
    const out = await call(recall, { query: 'capital' });
    expect(out.split('\n')[0]).toBe('2 items for "capital":');
    expect(out).toMatch(/^1\. France — has capital — Paris \(fact, confidence 0\.95\) \[id k_\w+, relevance \d\.\d\d\]$/m);
    expect(out).toContain('What is the capital of Italy? — answered — Rome (earlier answer');
  });

  it('filters by scope when given one', async () => {
    const [recall] = createKnowledgeTools(createMemoryKnowledgeStore(items));
    const out = await call(recall, { query: 'capital', scope: 'working' });
    expect(out).toContain('Rome');
    expect(out).not.toContain('Paris');
  });

  it('resolves conventions for a directory, naming the level each came from', async () => {
    const [recall] = createKnowledgeTools(createMemoryKnowledgeStore(items));
    const out = await call(recall, { query: 'typescript', directory: 'src/api/handlers', scope: 'conventions' });
    expect(out.split('\n').slice(1)).toEqual([
      expect.stringMatching(/^1\. code — should — validate input with zod \(convention for src\/api, .*from a parent directory\]$/),
      expect.stringMatching(/^2\. code — should — avoid any \(typescript convention, .*from language level\]$/),
    ]);
  });

  it('honours limit', async () => {
    const [recall] = createKnowledgeTools(createMemoryKnowledgeStore(items));
    expect((await call(recall, { query: 'capital', limit: 1 })).split('\n')).toHaveLength(2);
  });

  it('says so when nothing matches', async () => {
    const [recall] = createKnowledgeTools(createMemoryKnowledgeStore(items));
    expect(await call(recall, { query: 'haiku about the sea' })).toBe('No knowledge found for "haiku about the sea".');
  });

  it('rejects a directory with a scope other than conventions, and unknown keys, before running', async () => {
    const [recall] = createKnowledgeTools(createMemoryKnowledgeStore(items));
    expect(await call(recall, { query: 'x', directory: 'src', scope: 'fact' })).toMatch(/^INVALID: .*directory only applies to scope "conventions"/s);
    expect(await call(recall, { query: 'x', extra: 1 })).toMatch(/^INVALID/);
    expect(await call(recall, { query: '' })).toMatch(/^INVALID/);
    expect(await call(recall, { query: 'x', limit: 1000 })).toMatch(/^INVALID/);
  });
});

describe('store_knowledge', () => {
  it('stores a fact that the next recall finds, with its source run', async () => {
    const store = createMemoryKnowledgeStore();
    const [recall, remember] = createKnowledgeTools(store);
    expect(remember.name).toBe(STORE_KNOWLEDGE);
    const out = await call(remember, { subject: 'Earth', predicate: 'has', object: 'one moon', confidence: 0.95 });
    expect(out).toMatch(/^Stored k_\w+: Earth — has — one moon \(fact, confidence 0\.95\)$/);
    expect(store.items()[0]).toMatchObject({ scope: 'fact', source: 'store_knowledge:run_test' });
    expect(await call(recall, { query: 'moons of Earth' })).toContain('Earth — has — one moon');
  });

  it('is idempotent: storing the same fact twice keeps one item', async () => {
    const store = createMemoryKnowledgeStore();
    const [, remember] = createKnowledgeTools(store);
    const args = { subject: 'Earth', predicate: 'has', object: 'one moon', confidence: 0.95 };
    expect(await call(remember, args)).toBe(await call(remember, args));
    expect(store.size).toBe(1);
    expect(remember.idempotent).toBe(true);
  });

  it('validates the triple and the confidence range', async () => {
    const [, remember] = createKnowledgeTools(createMemoryKnowledgeStore());
    expect(await call(remember, { subject: 'Earth', predicate: 'has', object: 'one moon', confidence: 2 })).toMatch(/^INVALID/);
    expect(await call(remember, { subject: ' ', predicate: 'has', object: 'one moon', confidence: 0.5 })).toMatch(/^INVALID/);
    expect(await call(remember, { subject: 'Earth', predicate: 'has', object: 'one moon' })).toMatch(/^INVALID/);
  });
});
