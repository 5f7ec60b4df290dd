/**
 * One writer per run. A new run is owned through its log's header record (the log is created
 * exclusively, so its creator is the only writer; the header names the creator's pid). A resume
 * takes a lock file holding its own pid, then checks the header's owner too. An owner whose
 * process is gone (the run was killed) is stale and taken over; a live owner — another process,
 * or another writer in this one — makes the second writer fail fast.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { RunLockedError } from './errors.ts';
import type { RunOwner } from './records.ts';
import { safeJsonParse } from './safeJson.ts';

/** Lock files and created runs' logs that a writer in this process holds right now. */
const heldHere = new Set<string>();

/** This host's name, asked once (a system call each time; a run's header needs it). */
let host: string | undefined;
const thisHost = (): string => (host ??= hostname());

/** This process as a run owner. */
export function currentOwner(): RunOwner {
  return { pid: process.pid, host: thisHost() };
}

/**
 * Mark `file` (a run's log) as held by this process until `release()`: the header written with
 * {@link currentOwner} tells other processes, this tells other writers in this one.
 */
export function holdCreatedRun(file: string): RunLock {
  heldHere.add(file);
  return { file, release: () => void heldHere.delete(file) };
}

/** True while a writer of this process holds `file` (a run's log). */
export const heldInThisProcess = (file: string): boolean => heldHere.has(file);

/**
 * True when `owner`, recorded in `file`, is still writing: a live process on this host (for this
 * process: a writer here still holds `file`), or any process on another host (its liveness
 * cannot be checked from here, so it is never taken over).
 */
export function ownerIsLive(owner: RunOwner | undefined, file: string): boolean {
  if (owner === undefined) return false;
  if (owner.host !== undefined && owner.host !== thisHost()) return true;
  return owner.pid === process.pid ? heldHere.has(file) : isAlive(owner.pid);
}

export interface RunLock {
  readonly file: string;
  release(): void;
}

/**
 * @example
 * ```ts
 * const lock = acquireRunLock('.actorloop/runs/run_1/lock', 'run_1');
 * try { … } finally { lock.release(); }
 * ```
 */
export function acquireRunLock(file: string, runId: string): RunLock {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, JSON.stringify({ pid: process.pid, host: thisHost(), at: Date.now() }));
      closeSync(fd);
      heldHere.add(file);
      return {
        file,
        release: () => {
          if (!heldHere.delete(file)) return;
          try {
            unlinkSync(file);
          } catch {
            // Already gone: nothing to release.
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = readOwner(file);
      if (ownerIsLive(owner, file)) {
        throw new RunLockedError(
          `Run ${runId} is already being written by process ${owner?.pid ?? '?'}${owner?.pid === process.pid ? ' (this process)' : ''}. ` +
            'Wait for it to finish or stop it; two writers would interleave the journal.',
          { file, runId },
        );
      }
      // Stale lock from a process that died: take it over.
      try {
        unlinkSync(file);
      } catch {
        // Someone else removed it first; the next attempt decides.
      }
    }
  }
  throw new RunLockedError(`Run ${runId}: could not take the lock at ${file}; another writer keeps taking it.`, { file, runId });
}

function readOwner(file: string): RunOwner | undefined {
  try {
    const parsed = safeJsonParse(readFileSync(file, 'utf8'));
    if (!parsed.ok || parsed.value === null || typeof parsed.value !== 'object') return undefined;
    const { pid, host } = parsed.value as { pid?: unknown; host?: unknown };
    if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) return undefined;
    return typeof host === 'string' ? { pid, host } : { pid };
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
