/**
 * One writer per run, as a lease. A created run is owned through its log's header; a resume takes
 * `<runId>.lock`. Takeover is never check-then-act: files appear complete (hard-linked into place),
 * and replacing generation g needs the claim file `<lock>.claim-<g+1>`, which only one process can create.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, futimesSync, openSync, readFileSync, renameSync, statSync, unlinkSync, utimesSync } from 'node:fs';
import { hostname } from 'node:os';
import { DEFAULTS } from '../core/defaults.ts';
import { ConfigurationError } from '../core/errors.ts';
import { discard, isErrno, placeComplete, readLockFile, readOpen, removeQuietly, type LockOwner, type LockState } from './lockFile.ts';
import { StoreError } from './errors.ts';
import { defined } from '../core/defined.ts';

export type { LockOwner } from './lockFile.ts';

const ATTEMPTS = 8;

export interface BaseClaim {
  readonly owner: LockOwner;
  readonly heartbeatAt: number;
  /** Checked against this process's writers, and named in errors. */
  readonly file?: string;
}

export interface AcquireRunLockOptions {
  readonly leaseMs: number;
  /** Take the run even from a live owner in another process (you know it is gone). */
  readonly takeover?: boolean;
  readonly base?: () => BaseClaim | undefined;
  readonly onLost?: (reason: string) => void;
}

export interface HoldCreatedRunOptions {
  /** If one appears while the run is held, another process has taken it over. */
  readonly lockFile: string;
  readonly leaseMs: number;
  /** `false`: hold in this process only, with no lease to renew (a journal-only run nobody else may resume). */
  readonly renew?: boolean;
  readonly onLost?: (reason: string) => void;
  /** A log longer than this was written by another process too: it took the run over. */
  readonly written?: () => number;
  /** Once this exists, a takeover moved the run's records out of the shared log. */
  readonly movedTo?: string;
  /** The run's id was made just now: no earlier run of it can have left a lock file. */
  readonly newId?: boolean;
}

export interface RunLock {
  readonly file: string;
  /** 0 for a created run, owned through its log. */
  readonly gen: number;
  /** `live` only when forced with `takeover`. */
  readonly replaced?: { readonly owner: LockOwner; readonly live: boolean };
  release(): void;
}

/** Whoever owns a run right now: a lock file's owner, or the base claim when there is no lock file. */
interface Holder extends LockState {
  readonly file: string;
  readonly live: boolean;
}

const NONE = 'none';

interface HeldBase {
  readonly file: string;
  readonly leaseMs: number;
  readonly renew: boolean;
  readonly onLost: ((reason: string) => void) | undefined;
}
interface HeldLock extends HeldBase {
  readonly kind: 'lock';
  readonly nonce: string;
}
interface HeldCreatedRun extends HeldBase {
  readonly kind: 'created';
  readonly lockFile: string;
  /** A lock file left over from before the run was created: not a takeover. */
  readonly lockAtHold: string | undefined;
  readonly written: (() => number) | undefined;
  readonly movedTo: string | undefined;
}
type Held = HeldLock | HeldCreatedRun;

const heldHere = new Map<string, Set<Held>>();
/** A base claim naming this process is live while one of these is held. */
const createdHere = new Map<string, Set<Held>>();

let host: string | undefined;
const thisHost = (): string => (host ??= hostname());
const startedAt = Math.round(performance.timeOrigin);

export function currentOwner(): { pid: number; host: string; startedAt: number } {
  return { pid: process.pid, host: thisHost(), startedAt };
}

export const heldInThisProcess = (file: string): boolean => (heldHere.get(file)?.size ?? 0) > 0;

export const createdRunHeldHere = (lockFile: string): boolean => (createdHere.get(lockFile)?.size ?? 0) > 0;

/**
 * On this host a live pid with an old lease is a reused pid or a hung process, so both must hold;
 * on another host only the lease can be checked.
 */
export function ownerIsLive(owner: LockOwner, heartbeatAt: number, file: string, leaseMs: number): boolean {
  const fresh = Date.now() - heartbeatAt < leaseMs;
  if (owner.host !== undefined && owner.host !== thisHost()) return fresh;
  if (owner.pid === process.pid) return isThisProcess(owner) && heldInThisProcess(file);
  return isAlive(owner.pid) && fresh;
}

/**
 * For a run that renews no lease (a journal-only one), whether the process its header names still runs: on this
 * host its pid says, and on Linux its start time too (a process that got the pid since started later); from another
 * host nobody can tell, so it counts as running.
 */
export function ownerProcessLive(owner: LockOwner): boolean {
  if (owner.host !== undefined && owner.host !== thisHost()) return true;
  if (owner.pid === process.pid) return owner.startedAt === undefined || owner.startedAt === startedAt;
  if (!isAlive(owner.pid)) return false;
  const running = owner.startedAt === undefined ? undefined : processStartedAt(owner.pid);
  return running === undefined || Math.abs(running - (owner.startedAt as number)) <= SAME_START_MS;
}

/**
 * The kernel's start time and the one a process records (its runtime's time origin) differ by its start-up, and the
 * boot time is known to the second: a pid given to another process is reused far later than this.
 */
const SAME_START_MS = 5_000;
/** USER_HZ, the unit of /proc's times: 100 on every Linux architecture Node.js runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

/** On Linux, when the process with this pid started (ms since the epoch); `undefined` where /proc cannot say. */
function processStartedAt(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields are counted after the command name, which is in parentheses and may hold spaces and parentheses itself.
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    const boot = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1];
    if (!Number.isFinite(ticks) || boot === undefined) return undefined;
    return Number(boot) * 1000 + (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** `undefined` if there is no lock file, its owner is stale, or it is unreadable. */
export function liveLockHolder(file: string, leaseMs: number): LockOwner | undefined {
  const state = readLockFile(file);
  return state?.owner !== undefined && stateIsLive(state, file, leaseMs) ? state.owner : undefined;
}

/** Throws StoreError (`run_locked`) if the owner (or, with no lock file, `base()`) is live; renews the lease until `release()`. */
export function acquireRunLock(file: string, runId: string, options: AcquireRunLockOptions): RunLock {
  const { leaseMs, takeover = false, base, onLost } = options;
  checkLease(leaseMs);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const current = currentHolder(file, base, leaseMs);
    // A writer in this process is known to be live: even a takeover would make two writers.
    if (current?.live === true && (!takeover || (current.owner !== undefined && isThisProcess(current.owner)))) throw lockedError(runId, current);
    const gen = (current?.gen ?? 0) + 1;
    const claim = `${file}.claim-${gen}`;
    const nonce = randomUUID();
    if (!placeComplete(claim, { ...currentOwner(), gen, nonce })) {
      const other = readLockFile(claim);
      if (other !== undefined && stateIsLive(other, claim, leaseMs)) throw claimedError(runId, claim, other);
      if (other !== undefined) discard(claim);
      continue;
    }
    let claimHeld = true;
    try {
      // Someone replaced the lock (or created one) since we looked: the next round looks again.
      if ((readLockFile(file)?.id ?? NONE) !== (current?.id ?? NONE)) continue;
      try {
        renameSync(claim, file);
        claimHeld = false;
      } catch (error) {
        // Our claim was judged stale and moved aside: we stalled for longer than a lease.
        if (!isErrno(error, 'ENOENT')) throw error;
        claimHeld = false;
        continue;
      }
      // What we renamed may be another's claim that replaced ours in a race for a stale claim.
      if (readLockFile(file)?.nonce !== nonce) continue;
      const replaced = current?.owner === undefined ? undefined : { owner: current.owner, live: current.live };
      return hold({ kind: 'lock', file, leaseMs, renew: true, onLost, nonce }, gen, replaced, () => releaseLockFile(file, gen, nonce, leaseMs));
    } finally {
      if (claimHeld) removeQuietly(claim);
    }
  }
  throw new StoreError('run_locked',
    `Run ${runId}: could not take the lock ${file} in ${ATTEMPTS} attempts; other processes kept taking it over. Try again in a moment.`,
    { file, runId },
  );
}

/** Renews the lease by touching the log; a lock file appearing at `lockFile` means a takeover, and `onLost` is called once. */
export function holdCreatedRun(logFile: string, options: HoldCreatedRunOptions): RunLock {
  const { lockFile, leaseMs, renew = true, onLost, written, movedTo } = options;
  checkLease(leaseMs);
  // A lock file left from an earlier run of this id is not a takeover; a different one later is.
  const lockAtHold = renew && options.newId !== true && existsSync(lockFile) ? readLockFile(lockFile)?.id : undefined;
  return hold({ kind: 'created', file: logFile, leaseMs, renew, onLost, lockFile, lockAtHold, written, movedTo }, 0, undefined, () => undefined);
}

function checkLease(leaseMs: number): void {
  if (!Number.isFinite(leaseMs) || leaseMs <= 0) {
    throw new ConfigurationError(`leaseMs must be a positive number of milliseconds, got ${String(leaseMs)}; e.g. ${DEFAULTS.persistence.leaseMs}.`);
  }
}

function isThisProcess(owner: LockOwner): boolean {
  return owner.pid === process.pid && (owner.host === undefined || owner.host === thisHost()) && (owner.startedAt === undefined || owner.startedAt === startedAt);
}

function stateIsLive(state: LockState, file: string, leaseMs: number): boolean {
  // Unreadable: nobody can say who holds it, so it holds for a lease from its mtime.
  if (state.owner === undefined) return Date.now() - state.heartbeatAt < leaseMs;
  return ownerIsLive(state.owner, state.heartbeatAt, file, leaseMs);
}

function currentHolder(file: string, base: (() => BaseClaim | undefined) | undefined, leaseMs: number): Holder | undefined {
  const state = readLockFile(file);
  if (state !== undefined) return { ...state, file, live: stateIsLive(state, file, leaseMs) };
  const claim = base?.();
  if (claim === undefined) return undefined;
  const { owner, heartbeatAt } = claim;
  const held = claim.file ?? file;
  // The creator in this process holds the log, and is indexed by the lock file too.
  const live = isThisProcess(owner) ? heldInThisProcess(held) || (createdHere.get(file)?.size ?? 0) > 0 : ownerIsLive(owner, heartbeatAt, held, leaseMs);
  return { id: NONE, owner, gen: 0, nonce: undefined, heartbeatAt, file: held, live };
}

function describeOwner(owner: LockOwner): string {
  return `process ${owner.pid}${isThisProcess(owner) ? ' (this process)' : ''} on host ${owner.host ?? thisHost()}`;
}

const whose = (state: LockState): string => (state.owner === undefined ? 'unreadable' : `held by ${describeOwner(state.owner)}`);

const secondsAgo = (at: number): number => Math.max(0, Math.round((Date.now() - at) / 1000));

function lockedError(runId: string, holder: Holder): StoreError {
  const options = { file: holder.file, runId };
  if (holder.owner === undefined) {
    return new StoreError('run_locked',
      `Run ${runId}'s lock file ${holder.file} is unreadable and ${secondsAgo(holder.heartbeatAt)} s old: a process may be writing it. ` +
        'Try again in a moment, or resume with { takeover: true } if you know no process is writing the run.',
      options,
    );
  }
  if (isThisProcess(holder.owner)) {
    return new StoreError('run_locked',
      `Run ${runId} is already being written by ${describeOwner(holder.owner)}. Wait for that writer to finish; two writers would interleave the journal.`,
      options,
    );
  }
  return new StoreError('run_locked',
    `Run ${runId} is being written by ${describeOwner(holder.owner)} (lease renewed ${secondsAgo(holder.heartbeatAt)} s ago). ` +
      'Wait for it to finish or stop it, or resume with { takeover: true } if you know it is gone.',
    options,
  );
}

function claimedError(runId: string, claim: string, state: LockState): StoreError {
  const who = state.owner === undefined ? '' : ` (${describeOwner(state.owner)})`;
  return new StoreError('run_locked', `Another process${who} is taking over run ${runId} right now (claim ${claim}). Try again in a moment.`, { file: claim, runId });
}

/** Done holding the claim for `gen + 1`, so nobody can replace the lock between our check and the unlink. Never throws. */
function releaseLockFile(file: string, gen: number, nonce: string, leaseMs: number): void {
  const claim = `${file}.claim-${gen + 1}`;
  try {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (!placeComplete(claim, { ...currentOwner(), gen: gen + 1, nonce: randomUUID() })) {
        const other = readLockFile(claim);
        // Someone is taking the run over: the lock is theirs to replace, not ours to remove.
        if (other !== undefined && stateIsLive(other, claim, leaseMs)) return;
        if (other !== undefined) discard(claim);
        continue;
      }
      try {
        if (readLockFile(file)?.nonce === nonce) unlinkSync(file);
      } finally {
        removeQuietly(claim);
      }
      return;
    }
  } catch (error) {
    if (!isErrno(error)) throw error;
  }
}

function hold(entry: Held, gen: number, replaced: RunLock['replaced'], releaseFile: () => void): RunLock {
  add(heldHere, entry.file, entry);
  if (entry.kind === 'created') add(createdHere, entry.lockFile, entry);
  countRenewing(entry, 1);
  let released = false;
  return {
    file: entry.file,
    gen,
    ...defined({ replaced }),
    release() {
      if (released) return;
      released = true;
      // A lost lock is someone else's now: nothing of ours to remove.
      if (drop(entry)) releaseFile();
    },
  };
}

function add(index: Map<string, Set<Held>>, key: string, entry: Held): void {
  const set = index.get(key);
  if (set === undefined) index.set(key, new Set([entry]));
  else set.add(entry);
}

function drop(entry: Held): boolean {
  const remove = (index: Map<string, Set<Held>>, key: string): boolean => {
    const set = index.get(key);
    const had = set?.delete(entry) ?? false;
    if (set?.size === 0) index.delete(key);
    return had;
  };
  const had = remove(heldHere, entry.file);
  if (entry.kind === 'created') remove(createdHere, entry.lockFile);
  if (had) countRenewing(entry, -1);
  return had;
}

/** One interval renews every lease held here, at a third of the shortest. */
let heartbeat: { readonly timer: NodeJS.Timeout; readonly everyMs: number } | undefined;
const renewing = new Map<number, number>();

function countRenewing(entry: Held, delta: 1 | -1): void {
  if (!entry.renew) return;
  const count = (renewing.get(entry.leaseMs) ?? 0) + delta;
  if (count > 0) renewing.set(entry.leaseMs, count);
  else renewing.delete(entry.leaseMs);
  scheduleHeartbeat();
}

function scheduleHeartbeat(): void {
  const shortest = renewing.size === 0 ? undefined : Math.min(...renewing.keys());
  const everyMs = shortest === undefined ? undefined : Math.max(1, Math.floor(shortest / 3));
  if (heartbeat?.everyMs === everyMs) return;
  if (heartbeat !== undefined) clearInterval(heartbeat.timer);
  heartbeat = undefined;
  if (everyMs === undefined) return;
  const timer = setInterval(renewAll, everyMs);
  // A lease must not keep a process alive that has nothing else to do.
  timer.unref();
  heartbeat = { timer, everyMs };
}

function renewAll(): void {
  const lost: Array<{ entry: Held; reason: string }> = [];
  for (const set of heldHere.values()) {
    for (const entry of set) {
      if (!entry.renew) continue;
      const reason = renew(entry);
      if (reason !== undefined) lost.push({ entry, reason });
    }
  }
  for (const { entry, reason } of lost) {
    drop(entry);
    try {
      entry.onLost?.(reason);
    } catch (error) {
      // Thrown from a timer it would end the process; the run is lost either way.
      process.emitWarning(`onLost for ${entry.file} threw: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

/** A failure to renew is retried next time. */
function renew(entry: Held): string | undefined {
  const now = Date.now() / 1000;
  try {
    if (entry.kind === 'created') {
      const lock = readLockFile(entry.lockFile);
      if (lock !== undefined && lock.id !== entry.lockAtHold) return `another process took the run over: ${entry.lockFile} appeared, ${whose(lock)}`;
      if (entry.written !== undefined && statSync(entry.file).size > entry.written()) return `another process took the run over and wrote to its log ${entry.file}`;
      if (entry.movedTo !== undefined && existsSync(entry.movedTo)) return `another process took the run over and moved it to ${entry.movedTo}`;
      utimesSync(entry.file, now, now);
      return undefined;
    }
    let fd: number;
    try {
      fd = openSync(entry.file, 'r');
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return `its lock file ${entry.file} was removed by another process`;
      throw error;
    }
    try {
      const state = readOpen(fd);
      if (state.nonce !== entry.nonce) return `another process took the run over: ${entry.file} was replaced, ${whose(state)}`;
      // Through the descriptor: the file touched is the one just checked.
      futimesSync(fd, now, now);
      return undefined;
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if (entry.kind === 'created' && isErrno(error, 'ENOENT')) return `its log ${entry.file} was removed`;
    if (isErrno(error)) return undefined;
    throw error;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return isErrno(error, 'EPERM');
  }
}
