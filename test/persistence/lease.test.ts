/**
 * The run lock as a lease: of processes racing for a run whose owner is gone, exactly one wins;
 * a live owner (here, elsewhere, or in the making) is never taken without `takeover`; a held
 * lease is renewed, a lost one is noticed and left alone. Real processes and real files; a lease
 * is made stale by setting its mtime and renewed under fake timers, never waited for.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { acquireRunLock, currentOwner, heldInThisProcess, holdCreatedRun, liveLockHolder, ownerIsLive, type RunLock } from '../../src/persistence/lock.ts';
import { killHard, removeTempDirs, spawnFixture, tempDir, type Child } from './support.ts';

/**
 * Long enough that no fresh lease expires and none is renewed within a test, however loaded the
 * machine (stale leases are made stale by setting mtimes, never by waiting).
 */
const LEASE = 30_000;
const HOST = hostname();
const RACERS = 4;
const TRIALS = 200;
/** How far ahead of sending its commands a trial starts the racers. */
const START_AHEAD_MS = 10;

afterAll(removeTempDirs);

/** The pid of a process that has exited (and so, on this host, owns nothing). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.on('exit', resolve));
  const pid = child.pid ?? 0;
  expect(pidExists(pid)).toBe(false);
  return pid;
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A lock (or claim) file as this version writes it, with its mtime `ageMs` in the past. */
function writeLock(file: string, content: object, ageMs = 0): void {
  writeFileSync(file, JSON.stringify(content));
  age(file, ageMs);
}

function age(file: string, ageMs: number): void {
  const at = (Date.now() - ageMs) / 1000;
  utimesSync(file, at, at);
}

/** A run's stand-in log: the owner it names is the run's owner while there is no lock file. */
function writeLog(file: string, owner: { pid: number; host?: string }, ageMs = 0): void {
  writeLock(file, { owner }, ageMs);
}

function paths() {
  const dir = tempDir();
  return { dir, lock: join(dir, 'run.lock'), log: join(dir, 'run.log') };
}

describe('processes racing for a run', () => {
  const racers: Child[] = [];
  let trial = 0;
  let dead = 0;

  beforeAll(async () => {
    for (let i = 0; i < RACERS; i++) racers.push(spawnFixture('lockRacer.ts', []));
    await Promise.all(racers.map((racer) => racer.waitFor((line) => line === 'ready', 20_000)));
    dead = await deadPid();
  }, 30_000);
  afterAll(async () => {
    await Promise.all(racers.splice(0).map(killHard));
  });

  interface Answer {
    readonly answer: string;
    /** The generation of the lock taken (`owned` only). */
    readonly gen: number;
    /** Whether the owner it replaced was live (`owned` only). */
    readonly replacedLive: boolean;
    readonly text: string;
  }

  /**
   * Send `try` to each of `who`, to start at the same moment (a little ahead, so every racer has
   * the command by then; one that gets it late just starts late); the trial's id, and their
   * answers in the same order.
   */
  async function race(lock: string, log: string, who: readonly Child[] = racers, extra = ''): Promise<{ id: string; answers: Answer[] }> {
    const id = String(++trial);
    const answered = who.map((racer) => racer.waitFor((line) => line.split(' ')[1] === id && /^(owned|locked|error) /.test(line)));
    const goAt = Date.now() + START_AHEAD_MS;
    for (const racer of who) racer.process.stdin.write(`try ${id} ${goAt} ${lock} ${log} ${LEASE}${extra}\n`);
    const answers = (await Promise.all(answered)).map((line) => {
      const [answer = '', , ...rest] = line.split(' ');
      const owned = answer === 'owned';
      return { answer, gen: owned ? Number(rest[0]) : 0, replacedLive: owned && rest[1] === 'live', text: rest.join(' ') };
    });
    return { id, answers };
  }

  async function release(racer: Child, id: string): Promise<void> {
    racer.process.stdin.write(`release ${id}\n`);
    await racer.waitFor((line) => line === `released ${id}`);
  }

  const answersOf = async (...args: Parameters<typeof race>): Promise<string[]> => (await race(...args)).answers.map((a) => a.answer);

  it(`gives a run whose owner is gone to exactly one of ${RACERS} processes, ${TRIALS} times over`, async () => {
    // Each a way a run's owner can be gone; `gen` is the generation the winner's lock must exceed.
    const states: Array<{ name: string; prepare: (p: ReturnType<typeof paths>) => void; gen: number }> = [
      {
        name: 'lock of a dead process on this host',
        prepare: ({ lock }) => writeLock(lock, { pid: dead, host: HOST, startedAt: 1, gen: 3, nonce: 'dead' }),
        gen: 3,
      },
      {
        name: 'lock from another host, lease expired',
        prepare: ({ lock }) => writeLock(lock, { pid: 4242, host: 'elsewhere', startedAt: 1, gen: 7, nonce: 'far' }, 2 * LEASE),
        gen: 7,
      },
      { name: 'no lock, the creator dead', prepare: () => undefined, gen: 0 },
      {
        name: 'stale claim of a dead process and a stale lock',
        prepare: ({ lock }) => {
          writeLock(lock, { pid: dead, host: HOST, startedAt: 1, gen: 2, nonce: 'dead' });
          writeLock(`${lock}.claim-3`, { pid: dead, host: HOST, startedAt: 1, gen: 3, nonce: 'dead-claim' });
        },
        gen: 2,
      },
      {
        name: 'lock of a live process on this host, lease expired (hung, or a reused pid)',
        prepare: ({ lock }) => writeLock(lock, { pid: process.pid, host: HOST, startedAt: 1, gen: 4, nonce: 'hung' }, 2 * LEASE),
        gen: 4,
      },
    ];
    const wins = racers.map(() => 0);
    const started = performance.now();
    for (let n = 0; n < TRIALS; n++) {
      const state = states[n % states.length]!;
      // A pid freed long ago may have been handed out again.
      if (pidExists(dead)) dead = await deadPid();
      const p = paths();
      // The log always names a dead creator: with a lock file present it must not matter.
      writeLog(p.log, { pid: dead, host: HOST });
      state.prepare(p);
      const { id, answers } = await race(p.lock, p.log);
      const winners = answers.flatMap((a, i) => (a.answer === 'owned' ? [i] : []));
      expect(answers.filter((a) => a.answer === 'error'), state.name).toEqual([]);
      expect(winners, `trial ${n}: ${state.name}`).toHaveLength(1);
      const winner = winners[0]!;
      wins[winner]!++;
      expect(answers[winner]!.gen).toBeGreaterThan(state.gen);
      // The lock on disk names the winner, and it alone.
      expect(JSON.parse(readFileSync(p.lock, 'utf8'))).toMatchObject({ pid: racers[winner]!.process.pid, gen: answers[winner]!.gen });
      await release(racers[winner]!, id);
      // Nothing left behind: no lock, no claim, no temp file.
      expect(readdirSync(p.dir), state.name).toEqual(['run.log']);
      rmSync(p.dir, { recursive: true });
    }
    // Not a proof of contention, but a race always won by one process would be suspicious.
    expect(wins.filter((w) => w > 0).length).toBeGreaterThan(1);
    console.info(`[lease race] ${TRIALS} trials in ${Math.round(performance.now() - started)} ms, wins per process ${wins.join('/')}`);
  }, 60_000);

  it('takes no live lease from another host', async () => {
    const p = paths();
    writeLock(p.lock, { pid: 4242, host: 'elsewhere', startedAt: 1, gen: 5, nonce: 'far' });
    const { answers } = await race(p.lock, p.log);
    expect(answers.map((a) => a.answer)).toEqual(['locked', 'locked', 'locked', 'locked']);
    expect(answers[0]!.text).toContain('process 4242 on host elsewhere');
    expect(answers[0]!.text).toContain('{ takeover: true }');
    expect(JSON.parse(readFileSync(p.lock, 'utf8'))).toMatchObject({ nonce: 'far' });
  });

  it('takes no live owner on this host: a lock holder, a process named in a lock, a creator', async () => {
    // A racer holds it: the others see a live process, the racer itself its own held lock.
    const held = paths();
    const first = await race(held.lock, held.log, racers.slice(0, 1));
    expect(first.answers[0]?.answer).toBe('owned');
    const { answers: again } = await race(held.lock, held.log);
    expect(again.map((a) => a.answer)).toEqual(['locked', 'locked', 'locked', 'locked']);
    expect(again[0]!.text).toContain('(this process)');
    expect(again[1]!.text).toContain(`process ${racers[0]!.process.pid} on host ${HOST}`);
    await release(racers[0]!, first.id);
    expect(existsSync(held.lock)).toBe(false);

    // This test's process, named in a fresh lock, or as the creator of a run with no lock yet.
    const named = paths();
    writeLock(named.lock, { pid: process.pid, host: HOST, gen: 1, nonce: 'parent' });
    expect(await answersOf(named.lock, named.log)).toEqual(['locked', 'locked', 'locked', 'locked']);
    const created = paths();
    writeLog(created.log, { pid: process.pid, host: HOST });
    const { answers } = await race(created.lock, created.log);
    expect(answers.map((a) => a.answer)).toEqual(['locked', 'locked', 'locked', 'locked']);
    expect(answers[0]!.text).toContain(`process ${process.pid} on host ${HOST}`);
    expect(existsSync(created.lock)).toBe(false);
  });

  it('takes live leases with takeover one at a time: no two owners share a generation', async () => {
    const p = paths();
    writeLock(p.lock, { pid: 4242, host: 'elsewhere', startedAt: 1, gen: 5, nonce: 'far' });
    const { id, answers } = await race(p.lock, p.log, racers, ' takeover');
    // Forced, several may take it in turn, each from the one before (and a generation whose taker
    // was replaced before it could look is skipped); the newest is the one on disk.
    const owners = answers.flatMap((a, i) => (a.answer === 'owned' ? [i] : []));
    expect(answers.filter((a) => a.answer === 'error')).toEqual([]);
    expect(owners.length).toBeGreaterThanOrEqual(1);
    const gens = owners.map((i) => answers[i]!.gen);
    expect(new Set(gens).size).toBe(gens.length);
    expect(Math.min(...gens)).toBeGreaterThan(5);
    expect(owners.every((i) => answers[i]!.replacedLive)).toBe(true);
    const last = owners.find((i) => answers[i]!.gen === Math.max(...gens))!;
    expect(JSON.parse(readFileSync(p.lock, 'utf8'))).toMatchObject({ pid: racers[last]!.process.pid, gen: Math.max(...gens) });
    // Released in turn, the earlier owners leave the last one's lock alone; its own release removes it.
    for (const i of owners.filter((i) => i !== last)) await release(racers[i]!, id);
    expect(JSON.parse(readFileSync(p.lock, 'utf8'))).toMatchObject({ pid: racers[last]!.process.pid });
    await release(racers[last]!, id);
    expect(readdirSync(p.dir)).toEqual([]);
  });
});

describe('one process', () => {
  const locks: RunLock[] = [];
  afterEach(() => {
    for (const lock of locks.splice(0)) lock.release();
  });
  const take = (...args: Parameters<typeof acquireRunLock>): RunLock => {
    const lock = acquireRunLock(...args);
    locks.push(lock);
    return lock;
  };

  it('takes a live lease only with takeover, and says whose it was', () => {
    const p = paths();
    writeLock(p.lock, { pid: 4242, host: 'elsewhere', startedAt: 1, gen: 5, nonce: 'far' });
    expect(() => take(p.lock, 'run_far', { leaseMs: LEASE })).toThrow(expect.objectContaining({ code: 'run_locked' }));
    expect(() => take(p.lock, 'run_far', { leaseMs: LEASE })).toThrow(
      /Run run_far is being written by process 4242 on host elsewhere \(lease renewed \d+ s ago\)\. .*\{ takeover: true \}/,
    );
    const lock = take(p.lock, 'run_far', { leaseMs: LEASE, takeover: true });
    expect(lock).toMatchObject({ file: p.lock, gen: 6, replaced: { owner: { pid: 4242, host: 'elsewhere', startedAt: 1 }, live: true } });
    expect(JSON.parse(readFileSync(p.lock, 'utf8'))).toMatchObject({ ...currentOwner(), gen: 6 });
    lock.release();
    expect(readdirSync(p.dir)).toEqual([]);
  });

  it('refuses a second writer in this process, even forced, and reports a stale owner it replaced as not live', async () => {
    const p = paths();
    writeLock(p.lock, { pid: await deadPid(), host: HOST, gen: 1, nonce: 'dead' });
    const lock = take(p.lock, 'run_1', { leaseMs: LEASE });
    expect(lock.replaced?.live).toBe(false);
    expect(lock.gen).toBe(2);
    expect(heldInThisProcess(p.lock)).toBe(true);
    expect(() => take(p.lock, 'run_1', { leaseMs: LEASE })).toThrow(/already being written by process \d+ \(this process\)/);
    // Not even forced: that writer is known to be live.
    expect(() => take(p.lock, 'run_1', { leaseMs: LEASE, takeover: true })).toThrow(/\(this process\)/);
    lock.release();
    lock.release();
    expect(heldInThisProcess(p.lock)).toBe(false);
    expect(existsSync(p.lock)).toBe(false);
    // Released, the run goes back to its base owner: here none.
    expect(take(p.lock, 'run_1', { leaseMs: LEASE, base: () => undefined })).toMatchObject({ gen: 1 });
  });

  it('reads an unreadable lock as live for a lease', () => {
    const torn = paths();
    writeFileSync(torn.lock, '{"pid": 12');
    expect(() => take(torn.lock, 'run_torn', { leaseMs: LEASE })).toThrow(/lock file .* is unreadable/);
    age(torn.lock, 2 * LEASE);
    const lock = take(torn.lock, 'run_torn', { leaseMs: LEASE });
    expect(lock.gen).toBe(1);
    expect(lock.replaced).toBeUndefined();
  });

  it('defers to the base owner while there is no lock file', async () => {
    const p = paths();
    // A creator in this process holds the run through its log.
    const created = holdCreatedRun(p.log, { lockFile: p.lock, leaseMs: LEASE });
    const base = () => ({ owner: currentOwner(), heartbeatAt: 0, file: p.log });
    expect(() => take(p.lock, 'run_new', { leaseMs: LEASE, base })).toThrow(/\(this process\)/);
    created.release();
    expect(take(p.lock, 'run_new', { leaseMs: LEASE, base })).toMatchObject({ gen: 1, replaced: { owner: currentOwner(), live: false } });

    // Another live process on this host: live while its lease is fresh.
    const q = paths();
    const parent = { pid: process.ppid, host: HOST };
    expect(() => take(q.lock, 'run_q', { leaseMs: LEASE, base: () => ({ owner: parent, heartbeatAt: Date.now() }) })).toThrow(expect.objectContaining({ code: 'run_locked' }));
    expect(take(q.lock, 'run_q', { leaseMs: LEASE, base: () => ({ owner: parent, heartbeatAt: Date.now() - 2 * LEASE }) }).gen).toBe(1);
  });

  it('names the live holder of a lock file, and nobody for a stale or missing one', async () => {
    const p = paths();
    expect(liveLockHolder(p.lock, LEASE)).toBeUndefined();
    writeLock(p.lock, { pid: await deadPid(), host: HOST, gen: 1, nonce: 'dead' });
    expect(liveLockHolder(p.lock, LEASE)).toBeUndefined();
    take(p.lock, 'run_h', { leaseMs: LEASE });
    expect(liveLockHolder(p.lock, LEASE)).toEqual(currentOwner());
  });

  it('judges owners by pid on this host, by lease elsewhere, by its own writers in this process', async () => {
    const now = Date.now();
    const old = now - 2 * LEASE;
    const file = paths().lock;
    const dead = await deadPid();
    expect(ownerIsLive({ pid: dead, host: HOST }, now, file, LEASE)).toBe(false);
    expect(ownerIsLive({ pid: dead }, now, file, LEASE)).toBe(false);
    expect(ownerIsLive({ pid: process.ppid, host: HOST }, now, file, LEASE)).toBe(true);
    expect(ownerIsLive({ pid: process.ppid, host: HOST }, old, file, LEASE)).toBe(false);
    expect(ownerIsLive({ pid: dead, host: 'elsewhere' }, now, file, LEASE)).toBe(true);
    expect(ownerIsLive({ pid: dead, host: 'elsewhere' }, old, file, LEASE)).toBe(false);
    expect(ownerIsLive(currentOwner(), now, file, LEASE)).toBe(false);
    const lock = take(file, 'run_me', { leaseMs: LEASE });
    expect(ownerIsLive(currentOwner(), old, file, LEASE)).toBe(true);
    // Our pid, but an earlier process's start time: a dead process whose pid we reuse.
    expect(ownerIsLive({ ...currentOwner(), startedAt: 1 }, now, file, LEASE)).toBe(false);
    lock.release();
  });
});

describe('the heartbeat', () => {
  const START = Date.parse('2030-01-01T00:00:00Z');
  const LONG_AGO = (START - 3_600_000) / 1000;
  beforeAll(() => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'], now: START });
  });
  afterAll(() => {
    vi.useRealTimers();
  });
  afterEach(() => {
    expect(vi.getTimerCount()).toBe(0);
  });

  const mtime = (file: string): number => Math.round(statSync(file).mtimeMs);
  /** Replace `file` the way another owner would: complete, atomically. */
  function replaceLock(file: string, content: object): void {
    writeFileSync(`${file}.theirs`, JSON.stringify(content));
    renameSync(`${file}.theirs`, file);
    utimesSync(file, LONG_AGO, LONG_AGO);
  }

  it('renews every held lease at a third of the shortest, and stops when nothing is held', () => {
    const a = paths();
    const b = paths();
    const slow = acquireRunLock(a.lock, 'run_a', { leaseMs: 30_000 });
    const fast = acquireRunLock(b.lock, 'run_b', { leaseMs: 3_000 });
    expect(vi.getTimerCount()).toBe(1);
    for (const file of [a.lock, b.lock]) utimesSync(file, LONG_AGO, LONG_AGO);
    vi.advanceTimersByTime(1_000);
    expect(mtime(a.lock)).toBe(Date.now());
    expect(mtime(b.lock)).toBe(Date.now());

    fast.release();
    expect(vi.getTimerCount()).toBe(1);
    const renewed = Date.now();
    vi.advanceTimersByTime(9_999);
    expect(mtime(a.lock)).toBe(renewed);
    vi.advanceTimersByTime(1);
    expect(mtime(a.lock)).toBe(Date.now());
    slow.release();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('notices a lock taken over, once, stops renewing it, and does not remove it on release', () => {
    const p = paths();
    const onLost = vi.fn();
    const lock = acquireRunLock(p.lock, 'run_lost', { leaseMs: 3_000, onLost });
    const theirs = { pid: 4242, host: 'elsewhere', startedAt: 1, gen: 2, nonce: 'theirs' };
    replaceLock(p.lock, theirs);
    vi.advanceTimersByTime(1_000);
    expect(onLost).toHaveBeenCalledTimes(1);
    expect(onLost.mock.calls[0]?.[0]).toMatch(/took the run over: .*run\.lock was replaced, held by process 4242 on host elsewhere/);
    expect(heldInThisProcess(p.lock)).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(10_000);
    expect(onLost).toHaveBeenCalledTimes(1);
    expect(mtime(p.lock)).toBe(LONG_AGO * 1000);
    lock.release();
    expect(JSON.parse(readFileSync(p.lock, 'utf8'))).toEqual(theirs);
  });

  it('never removes a lock taken over before the heartbeat noticed', () => {
    const p = paths();
    const onLost = vi.fn();
    const lock = acquireRunLock(p.lock, 'run_quick', { leaseMs: 3_000, onLost });
    replaceLock(p.lock, { pid: 4242, host: 'elsewhere', gen: 2, nonce: 'theirs' });
    lock.release();
    expect(JSON.parse(readFileSync(p.lock, 'utf8'))).toMatchObject({ nonce: 'theirs' });
    expect(onLost).not.toHaveBeenCalled();
    expect(readdirSync(p.dir)).toEqual(['run.lock']);
  });

  it("renews a created run's log until a lock file appears", () => {
    const p = paths();
    writeFileSync(p.log, '{}');
    // A lock left over from before the run was created is not a takeover.
    writeLock(p.lock, { pid: 4242, host: 'elsewhere', gen: 1, nonce: 'leftover' });
    const onLost = vi.fn();
    const held = holdCreatedRun(p.log, { lockFile: p.lock, leaseMs: 3_000, onLost });
    expect(heldInThisProcess(p.log)).toBe(true);
    utimesSync(p.log, LONG_AGO, LONG_AGO);
    vi.advanceTimersByTime(1_000);
    expect(mtime(p.log)).toBe(Date.now());
    expect(onLost).not.toHaveBeenCalled();

    replaceLock(p.lock, { pid: 4242, host: 'elsewhere', gen: 2, nonce: 'taken' });
    utimesSync(p.log, LONG_AGO, LONG_AGO);
    vi.advanceTimersByTime(1_000);
    expect(onLost).toHaveBeenCalledTimes(1);
    expect(onLost.mock.calls[0]?.[0]).toMatch(/took the run over: .*run\.lock appeared, held by process 4242 on host elsewhere/);
    vi.advanceTimersByTime(10_000);
    expect(onLost).toHaveBeenCalledTimes(1);
    expect(mtime(p.log)).toBe(LONG_AGO * 1000);
    expect(heldInThisProcess(p.log)).toBe(false);
    held.release();
    expect(existsSync(p.lock)).toBe(true);
  });

  it('holds a run without a lease when told not to renew', () => {
    const p = paths();
    const held = holdCreatedRun(p.log, { lockFile: p.lock, leaseMs: 3_000, renew: false });
    expect(heldInThisProcess(p.log)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    held.release();
    expect(heldInThisProcess(p.log)).toBe(false);
  });
});
