import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openKnowledgeStore } from '../../src/knowledge/fileStore.ts';
import type { KnowledgeStore } from '../../src/knowledge/store.ts';
import type { CorruptFileError } from '../../src/persistence/errors.ts';

let dir: string;
let file: string;
const open: KnowledgeStore[] = [];
const openStore = async () => {
  const store = await openKnowledgeStore({ file });
  open.push(store);
  return store;
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'actorloop-knowledge-'));
  file = join(dir, 'nested', 'knowledge.json');
});
afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const item = (id: string) => ({ id, subject: 'Earth', predicate: 'has', object: 'one moon', confidence: 0.9, createdAt: 1 });

describe('knowledge file store', () => {
  it('starts empty when the file is missing, and creates it on the first write', async () => {
    const store = await openStore();
    expect(store.size).toBe(0);
    expect(existsSync(file)).toBe(false);
    await store.add({ subject: 'Earth', predicate: 'has', object: 'one moon', confidence: 0.95 });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ v: 1, items: [{ subject: 'Earth', object: 'one moon' }] });
  });

  it('finds stored items again after closing and reopening the file (round trip)', async () => {
    const first = await openStore();
    const stored = await first.add({ subject: 'France', predicate: 'has capital', object: 'Paris', confidence: 0.95, scope: 'fact', source: 'test' });
    await first.add({ subject: 'errors', predicate: 'extend', object: 'ActorloopError', confidence: 0.8, scope: 'conventions', directory: 'src/api' });
    await first.close();

    const second = await openStore();
    expect(second.size).toBe(2);
    expect(second.get(stored.id)).toEqual(stored);
    expect(second.search('capital of France', { minRelevance: 0.3 })[0]?.item).toEqual(stored);
  });

  it.each([
    ['invalid JSON', '{"v":1,"items":[', 'corrupt_file'],
    ['an empty file', '', 'corrupt_file'],
    ['NUL bytes', '\u0000\u0000\u0000', 'corrupt_file'],
    ['a schema-invalid item', JSON.stringify({ v: 1, items: [{ id: 'k1', subject: 'x' }] }), 'corrupt_file'],
    ['duplicate ids', JSON.stringify({ v: 1, items: [item('k1'), item('k1')] }), 'corrupt_file'],
    ['a __proto__ key', '{"v":1,"items":[],"__proto__":{"polluted":true}}', 'corrupt_file'],
    ['a future schema version', JSON.stringify({ v: 2, items: [] }), 'unsupported_version'],
  ])('refuses %s with a typed error and leaves the file untouched', async (_name, content, expectedCode) => {
    mkdirSync(join(dir, 'nested'), { recursive: true });
    writeFileSync(file, content);
    const error: unknown = await openKnowledgeStore({ file }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: expectedCode });
    expect((error as CorruptFileError).file).toBe(file);
    expect(readFileSync(file, 'utf8')).toBe(content);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // The lock was released: once the file is fixed, it opens.
    writeFileSync(file, JSON.stringify({ v: 1, items: [item('k1')] }));
    expect((await openStore()).size).toBe(1);
  });

  it('fails fast when the same file is already open, and opens again once closed', async () => {
    const first = await openStore();
    await expect(openKnowledgeStore({ file })).rejects.toMatchObject({ code: 'knowledge_store_locked' });
    await first.close();
    expect((await openStore()).size).toBe(0);
  });

  it('removes a stray temp file left by a crash during a write', async () => {
    mkdirSync(join(dir, 'nested'), { recursive: true });
    const temp = join(dir, 'nested', '.knowledge.json.tmp');
    writeFileSync(temp, '{"v":1,"items":[');
    await openStore();
    expect(existsSync(temp)).toBe(false);
  });

  it('undoes a change whose write fails, so search never shows what the file lacks', async () => {
    const store = await openStore();
    await store.add({ subject: 'Earth', predicate: 'has', object: 'one moon', confidence: 0.9 });
    // A directory where lowdb writes its temp file makes the next write fail.
    mkdirSync(join(dir, 'nested', '.knowledge.json.tmp'));
    await expect(store.add({ subject: 'France', predicate: 'has capital', object: 'Paris', confidence: 0.9 })).rejects.toThrow();
    expect(store.size).toBe(1);
    expect(store.search('capital of France')).toEqual([]);
    rmSync(join(dir, 'nested', '.knowledge.json.tmp'), { recursive: true });
    await store.add({ subject: 'Mars', predicate: 'has', object: 'two moons', confidence: 0.9 });
    expect(JSON.parse(readFileSync(file, 'utf8')).items).toHaveLength(2);
  });

  it('persists concurrent adds in call order, none lost', async () => {
    const store = await openStore();
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.add({ subject: `planet${i}`, predicate: 'is', object: `number ${i}`, confidence: 0.5 })));
    await store.close();
    const again = await openStore();
    expect(again.items().map((i) => i.subject)).toEqual(Array.from({ length: 20 }, (_, i) => `planet${i}`));
  });
});
