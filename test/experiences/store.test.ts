import fc from 'fast-check';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.ts';
import { scopeApplies } from '../../src/experiences/experience.ts';
import { createMemoryExperienceStore } from '../../src/experiences/store.ts';
import { EXPERIENCE_DEFAULTS } from '../../src/experiences/defaults.ts';

const timeout = { condition: 'the vitest suite times out on CI', rule: 'run vitest with --pool=forks', confidence: 0.8 };
const eresolve = { condition: 'npm install fails with ERESOLVE', rule: 'retry with --legacy-peer-deps', confidence: 0.7 };
const ratelimit = { condition: 'the API answers 429 Too Many Requests', rule: 'wait for the Retry-After header before retrying', confidence: 0.9 };

describe('experience store: add, dedupe, accept, list, remove', () => {
  it('adds a candidate as pending, unused, with the fields the store assigns', async () => {
    const store = createMemoryExperienceStore();
    const added = await store.add({ ...timeout, evidence: ['run_1 timed out after 5 s'], sourceRunIds: ['run_1'] });
    expect(added).toMatchObject({
      ...timeout,
      scope: { kind: 'global' },
      evidence: ['run_1 timed out after 5 s'],
      sourceRunIds: ['run_1'],
      status: 'pending',
      usageCount: 0,
      successCount: 0,
      successRate: 0,
    });
    expect(added.id).toMatch(/^exp_[0-9a-f]{16}$/);
    expect(store.get(added.id)).toEqual(added);
    expect(store.size).toBe(1);
  });

  it('merges a repeated condition + rule + scope (ignoring case and spacing) instead of adding it twice', async () => {
    const store = createMemoryExperienceStore();
    const first = await store.add({ ...timeout, evidence: ['a'], sourceRunIds: ['run_1'] });
    const again = await store.add({
      condition: 'When  The Vitest suite times out on CI.',
      rule: 'Run vitest with --pool=forks',
      confidence: 0.9,
      evidence: ['a', 'b'],
      sourceRunIds: ['run_2'],
    });
    expect(again.id).toBe(first.id);
    expect(store.size).toBe(1);
    expect(again).toMatchObject({ condition: timeout.condition, evidence: ['a', 'b'], sourceRunIds: ['run_1', 'run_2'], confidence: 0.9 });
  });

  it('keeps the same content in different scopes apart', async () => {
    const store = createMemoryExperienceStore();
    await store.add(timeout);
    await store.add({ ...timeout, scope: { kind: 'tool', name: 'vitest' } });
    await store.add({ ...timeout, scope: { kind: 'project', path: '/srv/app' } });
    expect(store.size).toBe(3);
  });

  it('never demotes an active experience when a later run proposes it again as pending', async () => {
    const store = createMemoryExperienceStore();
    const active = await store.add(timeout, { status: 'active' });
    expect((await store.add(timeout)).status).toBe('active');
    expect(store.get(active.id)?.status).toBe('active');
  });

  it('accepts a pending experience, and rejects an unknown id with a not-found error', async () => {
    const store = createMemoryExperienceStore();
    const pending = await store.add(timeout);
    const accepted = await store.accept(pending.id);
    expect(accepted).toMatchObject({ id: pending.id, status: 'active' });
    expect(store.get(pending.id)?.status).toBe('active');
    const error = await store.accept('exp_missing').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'experience_not_found', id: 'exp_missing' });
  });

  it('lists oldest first, narrowed by status and exact scope', async () => {
    const store = createMemoryExperienceStore();
    const a = await store.add(timeout, { status: 'active' });
    const b = await store.add(eresolve);
    const c = await store.add({ ...ratelimit, scope: { kind: 'project', path: '/srv/app/' } }, { status: 'active' });
    expect(store.list().map((e) => e.id)).toEqual([a.id, b.id, c.id]);
    expect(store.list({ status: 'active' }).map((e) => e.id)).toEqual([a.id, c.id]);
    expect(store.list({ status: 'pending' }).map((e) => e.id)).toEqual([b.id]);
    expect(store.list({ scope: { kind: 'project', path: '/srv/app' } }).map((e) => e.id)).toEqual([c.id]);
    expect(store.list({ scope: { kind: 'global' }, status: 'active' }).map((e) => e.id)).toEqual([a.id]);
  });

  it('removes an experience (true), and reports false for one it does not hold', async () => {
    const store = createMemoryExperienceStore();
    const added = await store.add(timeout, { status: 'active' });
    expect(await store.remove(added.id)).toBe(true);
    expect(await store.remove(added.id)).toBe(false);
    expect(store.get(added.id)).toBeUndefined();
    expect(store.relevant('vitest times out on CI')).toEqual([]);
  });

  it('refuses an invalid candidate with a ConfigurationError naming the problem', async () => {
    const store = createMemoryExperienceStore();
    await expect(store.add({ ...timeout, confidence: 2 })).rejects.toThrow(ConfigurationError);
    await expect(store.add({ ...timeout, condition: '   ' })).rejects.toThrow(/condition is empty/);
    await expect(store.add({ ...timeout, rule: 'x'.repeat(5_000) })).rejects.toThrow(/rule has 5000 characters/);
    expect(store.size).toBe(0);
  });

  it('hands out frozen experiences, so callers cannot change what the store holds', async () => {
    const store = createMemoryExperienceStore();
    const added = await store.add({ ...timeout, evidence: ['a'] });
    expect(Object.isFrozen(added) && Object.isFrozen(added.evidence) && Object.isFrozen(added.scope)).toBe(true);
  });

  it('rejects changes once closed', async () => {
    const store = createMemoryExperienceStore();
    await store.close();
    await expect(store.add(timeout)).rejects.toMatchObject({ code: 'experience_store_closed' });
    await expect(store.recordOutcome([], 'success')).rejects.toMatchObject({ code: 'experience_store_closed' });
  });
});

describe('experience store: relevant()', () => {
  it('ranks the experience matching the task first', () => {
    const store = createMemoryExperienceStore([eresolve, ratelimit, timeout]);
    const found = store.relevant('Fix the failing tests: vitest times out in the CI job');
    expect(found[0]?.condition).toBe(timeout.condition);
    expect(store.relevant('npm install fails on a fresh clone')[0]?.condition).toBe(eresolve.condition);
  });

  it('skips pending experiences', async () => {
    const store = createMemoryExperienceStore([{ ...timeout, status: 'pending' }]);
    expect(store.relevant('vitest times out on CI')).toEqual([]);
    await store.accept(store.list()[0]?.id ?? '');
    expect(store.relevant('vitest times out on CI')).toHaveLength(1);
  });

  it('returns at most topK, most relevant first', () => {
    const store = createMemoryExperienceStore([
      { condition: 'vitest times out', rule: 'raise testTimeout', confidence: 0.5 },
      { condition: 'vitest times out on CI', rule: 'run vitest with --pool=forks', confidence: 0.5 },
      { condition: 'vitest is slow', rule: 'use the threads pool locally', confidence: 0.5 },
    ]);
    expect(store.relevant('vitest times out on CI', { topK: 2 }).map((e) => e.rule)).toEqual(['run vitest with --pool=forks', 'raise testTimeout']);
    expect(store.relevant('vitest times out on CI', { topK: 0 })).toEqual([]);
    expect(() => store.relevant('x', { topK: -1 })).toThrow(ConfigurationError);
  });

  it('leaves out what does not match the task well enough', () => {
    const store = createMemoryExperienceStore([timeout, eresolve]);
    expect(store.relevant('Summarise the README in three sentences')).toEqual([]);
  });

  it('applies global always, project scope inside that project only, tool scope only with that tool', () => {
    const store = createMemoryExperienceStore([
      { ...timeout, rule: 'global rule for timeouts' },
      { ...timeout, rule: 'project rule for timeouts', scope: { kind: 'project', path: '/srv/app' } },
      { ...timeout, rule: 'tool rule for timeouts', scope: { kind: 'tool', name: 'run_tests' } },
    ]);
    const rules = (options: { project?: string; tools?: string[] }) => store.relevant('vitest times out on CI', options).map((e) => e.rule).sort();
    expect(rules({})).toEqual(['global rule for timeouts']);
    expect(rules({ project: '/srv/app/packages/api' })).toEqual(['global rule for timeouts', 'project rule for timeouts']);
    expect(rules({ project: '/srv/application' })).toEqual(['global rule for timeouts']);
    expect(rules({ project: '/srv' })).toEqual(['global rule for timeouts']);
    expect(rules({ tools: ['read_file', 'run_tests'] })).toEqual(['global rule for timeouts', 'tool rule for timeouts']);
    expect(rules({ tools: ['read_file'] })).toEqual(['global rule for timeouts']);
  });

  it('resolves relative project paths against the working directory, on both sides', () => {
    expect(scopeApplies({ kind: 'project', path: resolve('pkg') }, { project: 'pkg/src' })).toBe(true);
    const store = createMemoryExperienceStore([{ ...timeout, scope: { kind: 'project', path: 'pkg' } }]);
    expect(store.list()[0]?.scope).toEqual({ kind: 'project', path: resolve('pkg') });
    expect(store.relevant('vitest times out', { project: resolve('pkg', 'src') })).toHaveLength(1);
  });
});

describe('experience store: recordOutcome()', () => {
  it('counts a run once per experience when given its id, remembering the latest runs it counted', async () => {
    const store = createMemoryExperienceStore([timeout, eresolve]);
    const [a, b] = store.list().map((e) => e.id) as [string, string];
    await store.recordOutcome([a], 'success', { runId: 'run_1' });
    // The same run ending again (resumed after a crash): a is skipped, b was not counted for it yet.
    const again = await store.recordOutcome([a, b], 'failure', { runId: 'run_1' });
    expect(again.map((e) => e.id)).toEqual([b]);
    expect(store.get(a)).toMatchObject({ usageCount: 1, successCount: 1, countedRunIds: ['run_1'] });
    expect(store.get(b)).toMatchObject({ usageCount: 1, successCount: 0, countedRunIds: ['run_1'] });
    // Without an id every call counts, as before.
    await store.recordOutcome([a], 'success');
    expect(store.get(a)).toMatchObject({ usageCount: 2, countedRunIds: ['run_1'] });
    // The memory is bounded: the oldest run ids go first.
    for (let i = 2; i <= EXPERIENCE_DEFAULTS.maxCountedRunIds + 1; i++) await store.recordOutcome([a], 'success', { runId: `run_${i}` });
    const counted = store.get(a)?.countedRunIds ?? [];
    expect(counted).toHaveLength(EXPERIENCE_DEFAULTS.maxCountedRunIds);
    expect(counted[0]).toBe('run_2');
    expect(counted.at(-1)).toBe(`run_${EXPERIENCE_DEFAULTS.maxCountedRunIds + 1}`);
  });

  it('counts each listed experience once per call and keeps successRate = successCount / usageCount', async () => {
    const store = createMemoryExperienceStore([timeout, eresolve]);
    const [a, b] = store.list().map((e) => e.id) as [string, string];
    await store.recordOutcome([a, a, b], 'success');
    const updated = await store.recordOutcome([a, 'exp_gone'], 'failure');
    expect(updated.map((e) => e.id)).toEqual([a]);
    expect(store.get(a)).toMatchObject({ usageCount: 2, successCount: 1, successRate: 0.5 });
    expect(store.get(b)).toMatchObject({ usageCount: 1, successCount: 1, successRate: 1 });
  });

  it('keeps successRate in [0, 1] and equal to successCount / usageCount after any sequence of outcomes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ which: fc.subarray([0, 1, 2]), success: fc.boolean() }), { maxLength: 30 }), async (steps) => {
        const store = createMemoryExperienceStore([timeout, eresolve, ratelimit]);
        const ids = store.list().map((e) => e.id);
        const expected = ids.map(() => ({ used: 0, won: 0 }));
        for (const step of steps) {
          await store.recordOutcome(step.which.map((i) => ids[i] as string), step.success ? 'success' : 'failure');
          for (const i of step.which) {
            const e = expected[i] as { used: number; won: number };
            e.used++;
            if (step.success) e.won++;
          }
        }
        for (const [i, id] of ids.entries()) {
          const item = store.get(id);
          const e = expected[i] as { used: number; won: number };
          expect(item).toMatchObject({ usageCount: e.used, successCount: e.won });
          expect(item?.successRate).toBeGreaterThanOrEqual(0);
          expect(item?.successRate).toBeLessThanOrEqual(1);
          expect(item?.successRate).toBe(e.used === 0 ? 0 : e.won / e.used);
        }
      }),
      { numRuns: 50 },
    );
  });
});
