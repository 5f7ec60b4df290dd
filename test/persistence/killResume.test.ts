import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JournalEntry } from '../../src/core/loopEvent.ts';
import { callKey } from '../../src/executor/callKey.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURE = join(import.meta.dirname, 'fixtures/killableAgent.ts');
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function workspace() {
  const dir = mkdtempSync(join(tmpdir(), 'actorloop-kill-'));
  dirs.push(dir);
  return { store: join(dir, 'store'), effects: join(dir, 'effects.txt'), calls: join(dir, 'calls.txt') };
}

interface ChildResult {
  signal: NodeJS.Signals | null;
  status: number | null;
  lines: Record<string, unknown>[];
  stderr: string;
}

function runChild(ws: ReturnType<typeof workspace>, env: Record<string, string>): ChildResult {
  const child = spawnSync(process.execPath, ['--import', 'tsx', FIXTURE], {
    cwd: ROOT,
    env: { ...process.env, STORE_DIR: ws.store, EFFECTS: ws.effects, CALLS: ws.calls, RUN_ID: 'run_k', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  const lines = child.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { signal: child.signal, status: child.status, lines, stderr: child.stderr };
}

/** The idempotency key of the fixture's call with `label` (both are made in iteration 1, a at position 0, b at 1). */
const key = (label: 'a' | 'b') => callKey('run_k', 1, label === 'a' ? 0 : 1, 'record_effect', { label }).key;

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []);

describe('kill and resume (real SIGKILL of a child process)', { timeout: 60_000 }, () => {
  it('resumes a run killed during a model call: completed tools are not re-run, the model call is re-issued once, same result', () => {
    const baseline = workspace();
    const uninterrupted = runChild(baseline, { MODE: 'start', KILL_AT: 'none' });
    expect(uninterrupted.status).toBe(0);

    const ws = workspace();
    const killed = runChild(ws, { MODE: 'start', KILL_AT: 'model-call-2' });
    expect(killed.signal).toBe('SIGKILL');
    expect(lines(ws.effects)).toHaveLength(2);
    expect(lines(ws.calls)).toEqual(['0', '2']);

    const resumed = runChild(ws, { MODE: 'resume' });
    expect(resumed.status, resumed.stderr).toBe(0);
    // The tools ran once each, in the first process only.
    expect(lines(ws.effects)).toEqual([`${key('a')} a`, `${key('b')} b`]);
    // The interrupted second model call was issued exactly once more.
    expect(lines(ws.calls)).toEqual(['0', '2', '2']);
    const final = resumed.lines.at(-1);
    expect(final).toMatchObject({ status: 'done', reason: 'final_answer', text: 'done: recorded a, recorded b' });
    expect(final?.messages).toEqual(uninterrupted.lines.at(-1)?.messages);

    // The journal of the resumed run is one ordered stream that parses.
    const journal = createFileStore({ dir: ws.store }).readJournal('run_k');
    const sequences = journal.entries.map((e) => e.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(sequences.length);
    expect(journal.entries.every((e) => JournalEntry.safeParse(e).success)).toBe(true);
    expect(journal.entries.at(-1)?.event).toMatchObject({ type: 'run.terminated', reason: 'final_answer' });
  });

  it('re-invokes an idempotent tool killed after its side effect with the same idempotency key (one effect)', () => {
    const ws = workspace();
    const killed = runChild(ws, { MODE: 'start', KILL_AT: 'after-effect', IDEMPOTENT: '1' });
    expect(killed.signal).toBe('SIGKILL');
    expect(lines(ws.effects)).toContain(`${key('b')} b`);

    const resumed = runChild(ws, { MODE: 'resume', IDEMPOTENT: '1' });
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(resumed.lines.at(-1)).toMatchObject({ status: 'done', text: 'done: recorded a, recorded b' });
    // Same key both times, so the idempotent tool recorded each effect once.
    expect(lines(ws.effects)).toEqual([`${key('a')} a`, `${key('b')} b`]);
  });

  it('does not re-run a non-idempotent tool that was interrupted: the run waits for a human', () => {
    const ws = workspace();
    const killed = runChild(ws, { MODE: 'start', KILL_AT: 'after-effect', IDEMPOTENT: '0' });
    expect(killed.signal).toBe('SIGKILL');
    expect(lines(ws.effects)).toHaveLength(2);

    const waiting = runChild(ws, { MODE: 'resume', IDEMPOTENT: '0' });
    expect(waiting.lines[0]).toEqual({ phase: 'awaitingHuman' });
    expect(lines(ws.effects)).toHaveLength(2);
  });

  it('runs an interrupted non-idempotent call again once a human approves', () => {
    const ws = workspace();
    runChild(ws, { MODE: 'start', KILL_AT: 'after-effect', IDEMPOTENT: '0' });
    const before = lines(ws.effects);
    const journalBefore = createFileStore({ dir: ws.store }).readJournal('run_k').entries;
    const keyOfCall: Record<string, string> = { call_a: key('a'), call_b: key('b') };
    const finished = new Set(journalBefore.flatMap((e) => (e.event.type === 'tool.finished' ? [keyOfCall[e.event.toolCallId]] : [])));
    const approved = runChild(ws, { MODE: 'resume', IDEMPOTENT: '0', APPROVE: '1' });
    expect(approved.status, approved.stderr).toBe(0);
    expect(approved.lines.at(-1)).toMatchObject({ status: 'done', text: 'done: recorded a, recorded b' });
    // Both calls ran in parallel and b killed the process, so a result may or may not have been
    // recorded for a. Exactly the calls without a recorded result ran again, once, after approval.
    const rerun = lines(ws.effects).slice(before.length);
    expect(rerun).toContain(`${key('b')} b`);
    for (const effect of rerun) expect(finished.has(effect.split(' ')[0] as string)).toBe(false);
    expect(new Set(rerun).size).toBe(rerun.length);
  });

  it("resumes a run killed while it waited on a gate's confirm: it waits again without asking the gate, and approve() runs the call", () => {
    const ws = workspace();
    const gateCalls = join(ws.store, '..', 'gate.txt');
    const killed = runChild(ws, { MODE: 'start', KILL_AT: 'awaiting-human', GATE_CALLS: gateCalls });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    expect(lines(ws.effects)).toEqual([]);
    const journal = createFileStore({ dir: ws.store }).readJournal('run_k').entries.map((e) => e.event);
    expect(journal).toContainEqual({ type: 'policy.evaluated', toolCallId: 'call_b', tool: 'record_effect', decision: 'confirm', reason: 'Recording b needs a human.' });
    expect(journal).toContainEqual({
      type: 'human.awaiting',
      kind: 'confirmation',
      toolCallIds: ['call_b'],
      reasons: [{ toolCallId: 'call_b', reason: 'Recording b needs a human.' }],
    });

    // The fixture approves only once the resumed run waits in awaitingHuman.
    const approved = runChild(ws, { MODE: 'resume', APPROVE: '1', GATE_CALLS: gateCalls });
    expect(approved.status, approved.stderr).toBe(0);
    expect(approved.lines.at(-1)).toMatchObject({ status: 'done', text: 'done: recorded a, recorded b' });
    expect(lines(ws.effects)).toEqual([`${key('a')} a`, `${key('b')} b`]);
    // The gate decided once, before the crash: the resumed runs replayed its decision.
    expect(lines(gateCalls)).toEqual(['a', 'b']);
    // The model was asked once before the crash and once after the approval.
    expect(lines(ws.calls)).toEqual(['0', '2']);
  });
});
