import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openExperienceStore, type ExperienceFileOptions } from '../../src/experiences/fileStore.ts';
import type { ExperienceStore } from '../../src/experiences/store.ts';
import type { CorruptFileError } from '../../src/persistence/errors.ts';

let dir: string;
let file: string;
const open: ExperienceStore[] = [];
const openStore = async (options: Omit<ExperienceFileOptions, 'file'> = {}) => {
  const store = await openExperienceStore({ ...options, file });
  open.push(store);
  return store;
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'actorloop-experiences-'));
  file = join(dir, 'nested', 'experiences.json');
});
afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const candidate = { condition: 'the vitest suite times out on CI', rule: 'run vitest with --pool=forks', confidence: 0.8 };
const stored = (id: string) => ({
  id,
  scope: { kind: 'global' },
  condition: 'c',
  rule: 'r',
  evidence: [],
  sourceRunIds: [],
  confidence: 0.5,
  usageCount: 0,
  successCount: 0,
  successRate: 0,
  status: 'active',
  createdAt: 1,
  updatedAt: 1,
});

describe('experience file store', () => {
  it('starts empty when the file is missing, and creates it on the first write', async () => {
    const store = await openStore();
    expect(store.size).toBe(0);
    expect(existsSync(file)).toBe(false);
    await store.add(candidate);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ v: 1, items: [{ condition: candidate.condition, status: 'pending' }] });
  });

  it('keeps experiences, acceptance and outcomes across close and reopen', async () => {
    const first = await openStore();
    const added = await first.add({ ...candidate, scope: { kind: 'tool', name: 'vitest' }, evidence: ['run_1 timed out'], sourceRunIds: ['run_1'] });
    await first.accept(added.id);
    await first.recordOutcome([added.id], 'success', { runId: 'run_2' });
    await first.recordOutcome([added.id], 'failure');
    const removed = await first.add({ condition: 'x happens', rule: 'do y', confidence: 0.1 });
    await first.remove(removed.id);
    await first.close();

    const second = await openStore();
    expect(second.size).toBe(1);
    expect(second.get(added.id)).toMatchObject({ status: 'active', usageCount: 2, successCount: 1, successRate: 0.5, evidence: ['run_1 timed out'] });
    expect(second.relevant('vitest times out on CI', { tools: ['vitest'] }).map((e) => e.id)).toEqual([added.id]);
    // The runs it counted are kept too: a run that ends again in a later process is not counted twice.
    await second.recordOutcome([added.id], 'success', { runId: 'run_2' });
    expect(second.get(added.id)).toMatchObject({ usageCount: 2, countedRunIds: ['run_2'] });
  });

  it.each([
    ['invalid JSON', '{"v":1,"items":[', 'corrupt_file'],
    ['an empty file', '', 'corrupt_file'],
    ['NUL bytes', '\u0000\u0000\u0000', 'corrupt_file'],
    ['a schema-invalid experience', JSON.stringify({ v: 1, items: [{ id: 'exp_1', condition: 'x' }] }), 'corrupt_file'],
    ['a successRate that contradicts its counts', JSON.stringify({ v: 1, items: [{ ...stored('exp_1'), usageCount: 4, successCount: 1, successRate: 0.9 }] }), 'corrupt_file'],
    ['duplicate ids', JSON.stringify({ v: 1, items: [stored('exp_1'), stored('exp_1')] }), 'corrupt_file'],
    ['a __proto__ key', '{"v":1,"items":[],"__proto__":{"polluted":true}}', 'corrupt_file'],
    ['a future schema version', JSON.stringify({ v: 2, items: [] }), 'unsupported_version'],
  ])('refuses %s with a typed error naming the file, and leaves its bytes untouched', async (_name, content, expectedCode) => {
    mkdirSync(join(dir, 'nested'), { recursive: true });
    writeFileSync(file, content);
    const before = readFileSync(file);
    const error: unknown = await openExperienceStore({ file }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: expectedCode });
    expect((error as CorruptFileError).file).toBe(file);
    expect((error as Error).message).toContain(file);
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // The lock was released: once the file is fixed, it opens.
    writeFileSync(file, JSON.stringify({ v: 1, items: [stored('exp_1')] }));
    expect((await openStore()).size).toBe(1);
  });

  it('fails fast with a locked-store error naming the file while another store has it open, and opens once closed', async () => {
    const first = await openStore();
    const error: unknown = await openExperienceStore({ file }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'experience_store_locked', file });
    expect((error as Error).message).toContain(file);
    await first.close();
    expect((await openStore()).size).toBe(0);
  });

  it('redacts every stored string, so a secret never reaches the file', async () => {
    const secret = 'sk-live-51HfakeSECRETtoken0123456789';
    const redact = (text: string) => text.replaceAll(/sk-live-[A-Za-z0-9]+/g, '[REDACTED]');
    const store = await openStore({ redact });
    const added = await store.add({
      condition: `the API rejects key ${secret}`,
      rule: `rotate ${secret} and retry`,
      evidence: [`401 for ${secret}`],
      sourceRunIds: [`run_${secret}`],
      scope: { kind: 'tool', name: `http_${secret}` },
      confidence: 0.5,
    });
    await store.close();
    const bytes = readFileSync(file, 'utf8');
    expect(bytes).not.toContain(secret);
    expect(bytes).not.toContain('sk-live');
    expect(bytes).toContain('[REDACTED]');
    expect(added.condition).toBe('the API rejects key [REDACTED]');
  });

  it('undoes a change whose write fails, so relevant() never shows what the file lacks', async () => {
    const store = await openStore();
    await store.add(candidate, { status: 'active' });
    // A directory where lowdb writes its temp file makes the next write fail.
    mkdirSync(join(dir, 'nested', '.experiences.json.tmp'));
    await expect(store.add({ condition: 'npm install fails with ERESOLVE', rule: 'retry with --legacy-peer-deps', confidence: 0.7 }, { status: 'active' })).rejects.toThrow();
    expect(store.size).toBe(1);
    expect(store.relevant('npm install fails')).toEqual([]);
    const id = store.list()[0]?.id ?? '';
    await expect(store.recordOutcome([id], 'success')).rejects.toThrow();
    expect(store.get(id)?.usageCount).toBe(0);
    rmSync(join(dir, 'nested', '.experiences.json.tmp'), { recursive: true });
    await store.recordOutcome([id], 'success');
    expect(JSON.parse(readFileSync(file, 'utf8')).items).toMatchObject([{ id, usageCount: 1 }]);
  });

  it('persists concurrent adds in call order, none lost', async () => {
    const store = await openStore();
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.add({ condition: `case ${i} happens`, rule: `handle case ${i}`, confidence: 0.5 })));
    await store.close();
    const again = await openStore();
    expect(again.list().map((e) => e.condition)).toEqual(Array.from({ length: 20 }, (_, i) => `case ${i} happens`));
  });
});
