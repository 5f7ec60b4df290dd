/**
 * Shared helpers for the persistence tests: temporary stores, a run interrupted the way a crash
 * leaves it, child processes driven over stdout, and a seeded random source.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { createAgent } from '../../src/agent/createAgent.ts';
import type { AgentRun } from '../../src/agent/types.ts';
import type { LoopResult } from '../../src/core/run.ts';
import { createFileStore, type RunStore } from '../../src/persistence/fileStore.ts';
import { META_VERSION } from '../../src/persistence/records.ts';
import { readRunHeader } from '../../src/persistence/runLog.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const FIXTURES = join(ROOT, 'test/persistence/fixtures');

const made: string[] = [];

/** A fresh store folder, removed by {@link removeTempDirs}. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'actorloop-persist-'));
  made.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  // A test that timed out leaves its writers running: they would go on filling the disk.
  for (const child of running) child.kill('SIGKILL');
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Fixture processes not yet exited. */
const running = new Set<ChildProcessByStdio<Writable, Readable, Readable>>();

/** A run's files: side by side in `runs/`. */
export const runFiles = (store: RunStore, runId: string) => {
  const runs = join(store.dir, 'runs');
  return {
    runs,
    log: join(runs, `${runId}.jsonl`),
    meta: join(runs, `${runId}.meta.json`),
    lock: join(runs, `${runId}.lock`),
    tmp: join(runs, `.${runId}.meta.json.tmp`),
  };
};

/** A tool that echoes its argument; counts its executions. */
export function echoTool(executions: string[] = []) {
  return defineTool({
    name: 'echo',
    description: 'Echo a word',
    input: z.object({ word: z.string() }),
    execute: ({ word }, { idempotencyKey }) => {
      executions.push(idempotencyKey);
      return `echo ${word}`;
    },
  });
}

/** The script of the reference run: one tool call, then a final answer. */
export const echoScript = () => [{ toolCalls: [{ name: 'echo', arguments: { word: 'hi' } }] }, { text: 'finished' }];

export interface InterruptedRun {
  readonly store: RunStore;
  readonly runId: string;
  /** The uninterrupted run's result, to compare a resumed run against. */
  readonly reference: LoopResult;
  /** The complete log of the uninterrupted run, line by line (with their `\n`). */
  readonly fullLines: readonly string[];
  /** Index in `fullLines` right after the cut. */
  readonly cutAt: number;
}

/**
 * A run as a crash right after its gate decided leaves it (the model has replied, no tool has
 * run): the log up to the gate's reply, a meta.json saying `running`, no lock. Cut from a
 * complete log of the same script, so the resumed run can be compared with the uninterrupted one.
 */
export async function interruptedRun(): Promise<InterruptedRun> {
  const runId = 'run_crashed';
  // The uninterrupted run of the same script: its result is the yardstick.
  const referenceStore = createFileStore({ dir: tempDir() });
  const reference = await createAgent({ id: 'agent_ref', model: scriptedModel(echoScript()), tools: [echoTool()], persistence: { store: referenceStore } }).start('say hi', {
    runId,
  }).settled;
  const source = runFiles(referenceStore, runId);
  const fullLines = readFileSync(source.log, 'utf8').split(/(?<=\n)/);
  const cutAt = fullLines.findIndex((line) => line.includes('"kind":"gate"')) + 1;
  if (cutAt === 0) throw new Error('the reference run never recorded its gate');
  const store = createFileStore({ dir: tempDir() });
  const target = runFiles(store, runId);
  mkdirSync(target.runs, { recursive: true });
  writeFileSync(target.log, fullLines.slice(0, cutAt).join(''));
  // A run that had waited for a human has a meta.json; this one says it was running.
  const header = readRunHeader(target.log);
  if (header === null) throw new Error('the reference run has no header');
  const { runId: id, agentId, task, createdAt } = header;
  writeFileSync(target.meta, JSON.stringify({ v: META_VERSION, runId: id, agentId, task, status: 'running', createdAt, updatedAt: createdAt }));
  return { store, runId, reference, fullLines, cutAt };
}

/** Resolves at the run's first `human.awaiting` event (replayed if it already happened). */
export function humanAwaited(run: AgentRun): Promise<void> {
  return new Promise<void>((resolve) => {
    const sub = run.events$.subscribe((entry) => {
      if (entry.event.type === 'human.awaiting') {
        resolve();
        queueMicrotask(() => sub.unsubscribe());
      }
    });
  });
}

/** Deterministic PRNG (mulberry32): the same seed gives the same kill points. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Child {
  readonly process: ChildProcessByStdio<Writable, Readable, Readable>;
  /** Every stdout line so far. */
  readonly lines: string[];
  /** Resolves with the first line matching `test` (rejects if the child exits first). */
  waitFor(test: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

/** Spawn `node --import tsx <fixture>` from the repo root, reading its stdout by lines. */
export function spawnFixture(fixture: string, args: readonly string[]): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', join(FIXTURES, fixture), ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  running.add(child);
  child.on('exit', () => running.delete(child));
  const lines: string[] = [];
  const waiters: Array<{ test: (line: string) => boolean; resolve: (line: string) => void }> = [];
  let buffered = '';
  let errors = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffered += chunk;
    let end: number;
    while ((end = buffered.indexOf('\n')) !== -1) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (waiter.test(line)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    }
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (errors += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    process: child,
    lines,
    exited,
    stderr: () => errors,
    waitFor(test, timeoutMs = 10_000) {
      const seen = lines.find(test);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`fixture ${fixture}: no matching line within ${timeoutMs} ms; stderr: ${errors}`)), timeoutMs);
        waiters.push({
          test,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
        void exited.then(({ code, signal }) => {
          clearTimeout(timer);
          reject(new Error(`fixture ${fixture} exited (${code ?? signal}) before the line; stderr: ${errors}`));
        });
      });
    },
  };
}

/** SIGKILL a child and wait until it is gone. */
export async function killHard(child: Child): Promise<void> {
  child.process.kill('SIGKILL');
  await child.exited;
}
