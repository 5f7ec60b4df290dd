/**
 * Tool effects across kills (property): runs of 1–3 turns of 1–5 parallel calls, idempotent and
 * not, from a provider that names every reply's calls `call_0`, `call_1`, …, killed with SIGKILL
 * at random moments (a model call, a tool call starting, a side effect just applied), once or
 * twice, then resumed to the end. A call that finished is never made again; every idempotent
 * call's effect happens exactly once (interrupted, it is made again under the same key); a call
 * that is not idempotent happens once, plus once per human approval of running it again after
 * an interruption, and never again without one; the conversation is the uninterrupted run's.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURES, removeTempDirs, ROOT, tempDir } from './support.ts';

afterAll(removeTempDirs);

type Plan = readonly (readonly ('idem' | 'once')[])[];

interface ChildRun {
  readonly killed: boolean;
  readonly approved: string[];
  readonly result?: { status: string; text: string | null; messages: unknown[] };
  readonly stderr: string;
}

function runChild(spec: Record<string, unknown>): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(FIXTURES, 'durableAgent.ts')], {
      cwd: ROOT,
      env: { ...process.env, SPEC: JSON.stringify(spec) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.on('error', reject);
    // A child that never ends is a run that never settles: fail with what it was asked to do, not at the test's timeout.
    const hung = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`The child run ${JSON.stringify(spec)} did not end within 120 s. Its stderr: ${err.slice(-2000)}`));
    }, 120_000);
    child.on('exit', (_code, signal) => {
      clearTimeout(hung);
      const lines = out.split('\n').filter(Boolean);
      const approved = lines.filter((l) => l.startsWith('approved ')).flatMap((l) => l.slice('approved '.length).split(','));
      const last = lines.at(-1);
      const result = last?.startsWith('{') === true ? (JSON.parse(last) as ChildRun['result']) : undefined;
      resolve({ killed: signal === 'SIGKILL', approved, ...(result === undefined ? {} : { result }), stderr: err });
    });
  });
}

/** Tool calls as the effects file tells them: per call, its keys, effects, starts and ends. */
function effectsOf(file: string) {
  const calls = new Map<string, { keys: Set<string>; starts: number; effects: number; dones: number; startedAfterDone: boolean }>();
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return calls;
  }
  for (const line of text.split('\n').filter(Boolean)) {
    const [kind, key, call] = line.split(' ') as [string, string, string];
    const seen = calls.get(call) ?? { keys: new Set<string>(), starts: 0, effects: 0, dones: 0, startedAfterDone: false };
    calls.set(call, seen);
    seen.keys.add(key);
    if (kind === 'start') {
      seen.starts++;
      if (seen.dones > 0) seen.startedAfterDone = true;
    }
    else if (kind === 'effect') seen.effects++;
    else seen.dones++;
  }
  return calls;
}

const figures = { runs: 0, kills: 0, effects: 0, approvals: 0 };

async function check(plan: Plan, killFractions: readonly number[]): Promise<void> {
  const moments = plan.length + 1 + 2 * plan.flat().length;
  const base = { runId: 'run_p', plan };
  const referenceDir = tempDir();
  const reference = await runChild({ ...base, dir: referenceDir, mode: 'start', effects: join(referenceDir, 'effects') });
  expect(reference.result?.status, reference.stderr).toBe('done');

  const dir = tempDir();
  const effects = join(dir, 'effects');
  const approved: string[] = [];
  let final: ChildRun['result'];
  for (const [i, fraction] of killFractions.entries()) {
    const run = await runChild({ ...base, dir, effects, mode: i === 0 ? 'start' : 'resume', killAt: 1 + Math.floor(fraction * moments) });
    approved.push(...run.approved);
    if (!run.killed) {
      final = run.result;
      expect(final, run.stderr).toBeDefined();
      break;
    }
    figures.kills++;
  }
  if (final === undefined) {
    const run = await runChild({ ...base, dir, effects, mode: 'resume' });
    approved.push(...run.approved);
    final = run.result;
    expect(final, run.stderr).toBeDefined();
  }
  expect(final?.status).toBe('done');
  expect(final?.messages).toEqual(reference.result?.messages);

  const calls = effectsOf(effects);
  for (const [turn, tools] of plan.entries()) {
    for (const [position, tool] of tools.entries()) {
      const name = `t${turn}c${position}`;
      const seen = calls.get(name);
      const approvals = approved.filter((a) => a === name).length;
      const interruptions = (seen?.starts ?? 0) - (seen?.dones ?? 0);
      expect(seen, name).toBeDefined();
      // One key for a call, however often it is made: the provider's reused id is not part of it.
      expect(seen?.keys.size, name).toBe(1);
      // A call that finished is never made again, idempotent or not: its recorded outcome stands.
      expect(seen?.startedAfterDone, name).toBe(false);
      figures.effects += seen?.effects ?? 0;
      figures.approvals += approvals;
      if (tool === 'idem') {
        expect(seen?.effects, name).toBe(1);
        expect(approvals, name).toBe(0);
      } else {
        expect(seen?.effects, name).toBeGreaterThanOrEqual(1);
        // Never made again without a human's approval, and approval is asked only after an interruption.
        expect((seen?.effects ?? 0) - 1, name).toBeLessThanOrEqual(approvals);
        expect(approvals, name).toBeLessThanOrEqual(interruptions);
      }
    }
  }
  // Every key is a call of the plan: no stale answer stood in for a new call, none ran twice under two keys.
  expect(calls.size).toBe(plan.flat().length);
  figures.runs++;
}

const plan = fc.array(fc.array(fc.constantFrom<'idem' | 'once'>('idem', 'once'), { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 3 });
const kills = fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 1, maxLength: 2 });

describe('tool effects across kills and resumes (property, real SIGKILL)', () => {
  it('happen exactly once per call when idempotent, and are made again only with approval otherwise', { timeout: 600_000 }, async () => {
    await fc.assert(fc.asyncProperty(plan, kills, check), {
      numRuns: 14,
      // The cases the property is about, always tried: a parallel act killed after some calls
      // finished (idempotent and not), with ids the next turn reuses.
      examples: [
        [[['idem', 'once', 'idem'], ['once', 'idem']], [6 / 14, 0]],
        [[['once', 'once'], ['once']], [4 / 11, 3 / 11]],
        [[['idem', 'idem', 'idem', 'idem', 'idem']], [8 / 13]],
      ],
    });
    if (process.env.ACTORLOOP_TEST_FIGURES === '1') console.log('exactly-once property:', figures);
  });
});
