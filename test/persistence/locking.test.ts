/**
 * one writer per run. A second process (or a second resume in this
 * one) fails fast on the run lock; processes working on their own runs in one store lose no
 * writes; a lock left by a killed process is taken over; the journal never interleaves.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, type Agent } from '../../src/agent/createAgent.ts';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import { createFileStore, type RunStore } from '../../src/persistence/fileStore.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { killHard, removeTempDirs, runFiles, spawnFixture, tempDir, type Child } from './support.ts';

const children: Child[] = [];
const agents: Agent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) agent.stop();
  await Promise.all(children.splice(0).map(killHard));
});
afterAll(removeTempDirs);

function spawnAgent(args: string[]): Child {
  const child = spawnFixture('agentProcess.ts', args);
  children.push(child);
  return child;
}

/** The child's `wait` tool, here released by the test instead of a kill. */
function waitTool() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  let runs = 0;
  const tool = defineTool({
    name: 'wait',
    description: 'Wait until released',
    input: z.object({}),
    execute: async () => {
      runs++;
      started();
      await released;
      return 'released';
    },
  });
  return { tool, release, running, runs: () => runs };
}

function agentOn(store: RunStore, tools: ReturnType<typeof waitTool>['tool'][], script = [{ text: 'finished' }]): Agent {
  const agent = createAgent({ id: 'agent_parent', model: scriptedModel(script), tools, persistence: { store } });
  agents.push(agent);
  return agent;
}

/** The pid in a resumed run's lock file. */
function lockOwner(store: RunStore, runId: string): number {
  return (JSON.parse(readFileSync(runFiles(store, runId).lock, 'utf8')) as { pid: number }).pid;
}

/** The pid a new run's log names as its writer (its first line, the `run` header). */
function creator(store: RunStore, runId: string): number {
  const [header] = readFileSync(runFiles(store, runId).log, 'utf8').split('\n');
  return (JSON.parse(header ?? '{}') as { kind?: string; owner?: { pid: number } }).owner?.pid ?? -1;
}

function expectUninterleaved(entries: readonly JournalEntry[], runId: string): void {
  const sequences = entries.map((e) => e.sequence);
  expect(sequences).toEqual(Array.from({ length: sequences.length }, (_, i) => i));
  expect(entries.every((e) => e.runId === runId)).toBe(true);
  expect(entries.filter((e) => e.event.type === 'run.started')).toHaveLength(1);
  expect(entries.filter((e) => e.event.type === 'run.terminated')).toHaveLength(1);
  expect(entries.at(-1)?.event.type).toBe('run.terminated');
}

describe('two processes on one store', () => {
  it('refuses, fast and without taking it over, to resume a run another live process is writing', async () => {
    const store = createFileStore({ dir: tempDir() });
    const child = spawnAgent([store.dir, 'held', 'block']);
    await child.waitFor((line) => line === 'ready');
    const { tool } = waitTool();
    const agent = agentOn(store, [tool]);

    const started = performance.now();
    let refused: unknown;
    try {
      agent.resume('held');
    } catch (error) {
      refused = error;
    }
    const elapsedMs = performance.now() - started;
    expect(refused).toMatchObject({ code: 'run_locked' });
    // The child created the run: its log's header names it, and no lock file is left behind.
    expect(refused).toMatchObject({ code: 'run_locked', runId: 'held', file: runFiles(store, 'held').log });
    expect(String((refused as Error).message)).toContain(String(child.process.pid));
    // Refused at once: a live owner's lease is never waited out (30 s by default).
    expect(elapsedMs).toBeLessThan(5_000);
    expect(() => store.resumeRun('held')).toThrow(expect.objectContaining({ code: 'run_locked' }));
    expect(() => store.createRun({ runId: 'held', agentId: 'x', task: 'steal it' })).toThrow(expect.objectContaining({ code: 'run_locked' }));
    expect(creator(store, 'held')).toBe(child.process.pid);
    expect(existsSync(runFiles(store, 'held').lock)).toBe(false);
    expect((await store.getRun('held'))?.status).toBe('running');
  });

  it('runs one run per process in the same store at the same time and loses no writes', async () => {
    const store = createFileStore({ dir: tempDir() });
    const iterations = 120;
    const child = spawnAgent([store.dir, 'child_run', 'loop', String(iterations)]);
    await child.waitFor((line) => line === 'ready');

    const tick = defineTool({
      name: 'tick',
      description: 'Take a millisecond',
      input: z.object({ n: z.number() }),
      execute: ({ n }) => new Promise<string>((resolve) => setTimeout(() => resolve(`tick ${n}`), 1)),
    });
    const model = scriptedModel((_request, i) => (i < iterations ? { toolCalls: [{ name: 'tick', arguments: { n: i } }] } : { text: 'done' }));
    const agent = createAgent({ id: 'agent_parent', model, tools: [tick], persistence: { store }, limits: { maxIterations: iterations + 1 } });
    agents.push(agent);
    const emitted: JournalEntry[] = [];
    agent.events$.subscribe((entry) => emitted.push(entry));

    child.process.stdin.write('go\n');
    const [mine, theirs] = await Promise.all([agent.start('tick', { runId: 'parent_run' }).settled, child.waitFor((line) => line.startsWith('done '), 20_000)]);
    expect(mine.status).toBe('done');
    const [, childCount, childStatus] = theirs.split(' ');
    expect(childStatus).toBe('done');

    const parentJournal = store.readJournal('parent_run');
    const childJournal = store.readJournal('child_run');
    expect(parentJournal.entries).toEqual(emitted);
    expect(childJournal.entries).toHaveLength(Number(childCount));
    expectUninterleaved(parentJournal.entries, 'parent_run');
    expectUninterleaved(childJournal.entries, 'child_run');
    expect(childJournal.entries.filter((e) => e.event.type === 'tool.finished')).toHaveLength(iterations);
    // The two runs really overlapped in time.
    const span = (entries: readonly JournalEntry[]) => [entries[0]?.timestamp ?? 0, entries.at(-1)?.timestamp ?? 0] as const;
    const [p0, p1] = span(parentJournal.entries);
    const [c0, c1] = span(childJournal.entries);
    expect(p0 < c1 && c0 < p1).toBe(true);
    const statuses = Object.fromEntries((await store.listRuns()).map((m) => [m.runId, m.status]));
    expect(statuses).toEqual({ parent_run: 'done', child_run: 'done' });
    expect(existsSync(runFiles(store, 'parent_run').lock) || existsSync(runFiles(store, 'child_run').lock)).toBe(false);
  });
});

describe('the same run resumed twice', () => {
  it('takes over the run of a killed process, refuses a second resume while live, and never interleaves the journal', async () => {
    const store = createFileStore({ dir: tempDir() });
    const child = spawnAgent([store.dir, 'twice', 'block']);
    await child.waitFor((line) => line === 'ready');
    await killHard(child);
    expect(creator(store, 'twice')).toBe(child.process.pid); // stale: its owner is dead
    expect(existsSync(runFiles(store, 'twice').lock)).toBe(false);

    const wait = waitTool();
    const agent = agentOn(store, [wait.tool]);
    const first = agent.resume('twice');
    await wait.running;
    expect(lockOwner(store, 'twice')).toBe(process.pid);

    expect(() => agent.resume('twice')).toThrow(expect.objectContaining({ code: 'run_locked' }));
    const other = agentOn(store, [waitTool().tool]);
    expect(() => other.resume('twice')).toThrow(expect.objectContaining({ code: 'run_locked' }));
    expect(() => store.resumeRun('twice')).toThrow(expect.objectContaining({ code: 'run_locked' }));

    wait.release();
    const result = await first.settled;
    expect(result.status).toBe('done');
    expect(result.text).toBe('finished');
    expect(wait.runs()).toBe(1);

    const { entries, warnings } = store.readJournal('twice');
    expect(warnings).toEqual([]);
    expectUninterleaved(entries, 'twice');
    // Restoring into `act` re-ran its invoke, not its entry actions.
    expect(entries.filter((e) => e.event.type === 'phase.entered' && e.event.phase === 'act')).toHaveLength(1);
    expect(entries.filter((e) => e.event.type === 'tools.dispatched')).toHaveLength(1);
    expect(existsSync(runFiles(store, 'twice').lock)).toBe(false);
    expect(() => agent.resume('twice')).toThrow(expect.objectContaining({ code: 'run_finished' }));
  });
});
