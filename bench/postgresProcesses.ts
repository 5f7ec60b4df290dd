/**
 * The processes of the PostgreSQL section: its worker processes (started, stopped, killed if
 * the bench is interrupted) and the CPU each side used, read from /proc.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { newCallCounts, type CallCounts } from './postgresAgents.ts';
import type { PostgresWorkerOptions } from './postgresWorker.ts';

const WORKER = fileURLToPath(new URL('./postgresWorker.ts', import.meta.url));

/** Worker processes running now. */
const live = new Set<ChildProcess>();

export interface WorkerProcess {
  readonly pid: number;
  /** Rejects if the process exits before `stop()` is called. */
  readonly died: Promise<never>;
  /** Stop it (it finishes the jobs in hand) and get the calls it made. */
  stop(): Promise<CallCounts>;
}

/** Start a worker process; resolves once it takes jobs. */
export function startWorker(url: string, options: PostgresWorkerOptions): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [...process.execArgv, WORKER, url, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit'] });
  live.add(child);
  let out = '';
  let stopping = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => live.delete(child));
  const died = exited.then((): never => {
    throw new Error(`A PostgreSQL bench worker exited (${String(child.exitCode ?? child.signalCode)}) ${stopping ? 'while stopping' : 'during the run'}.`);
  });
  died.catch(() => undefined);
  const stop = async (): Promise<CallCounts> => {
    stopping = true;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    const line = out.split('\n').find((text) => text.startsWith('counts '));
    return line === undefined ? newCallCounts() : (JSON.parse(line.slice('counts '.length)) as CallCounts);
  };
  return new Promise((resolve, reject) => {
    const early = () => reject(new Error(`A PostgreSQL bench worker exited (${String(child.exitCode)}) before it was ready.`));
    child.once('exit', early);
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      const before = out;
      out += chunk;
      if (!before.includes('ready') && out.includes('ready')) {
        child.off('exit', early);
        resolve({ pid: child.pid ?? 0, died, stop });
      }
    });
  });
}

/** Kill every worker process at once (the bench was interrupted). */
export function killWorkers(): void {
  for (const child of live) child.kill('SIGKILL');
}

export const sum = (values: readonly number[]): number => values.reduce((total, value) => total + value, 0);

/** Clock ticks per second of /proc's CPU times (100 on nearly every Linux). */
const TICKS = ((): number => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface ProcStat {
  readonly comm: string;
  readonly ppid: number;
  /** utime + stime, and cutime + cstime (children it reaped), in ticks. */
  readonly own: number;
  readonly reaped: number;
}

/** One process's /proc/<pid>/stat, or undefined (gone, or no /proc on this system). */
function procStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // comm may hold spaces and parentheses: the fields go on after its last ")".
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  const at = (field: number) => Number(fields[field - 3]);
  return { comm: text.slice(text.indexOf('(') + 1, close), ppid: at(4), own: at(14) + at(15), reaped: at(16) + at(17) };
}

/** CPU seconds a process used so far (NaN without /proc). */
export function processCpuSeconds(pid: number): number {
  const stat = procStat(pid);
  return stat === undefined ? NaN : stat.own / TICKS;
}

/**
 * CPU seconds the cluster's `postgres` processes used so far: the postmaster and its children,
 * plus the children it already reaped (backends whose connection closed), so none is lost.
 */
export function serverCpuSeconds(postmaster: number): number {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return NaN;
  }
  let ticks = 0;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const stat = procStat(pid);
    if (stat === undefined || stat.comm !== 'postgres') continue;
    if (pid === postmaster) ticks += stat.own + stat.reaped;
    else if (stat.ppid === postmaster) ticks += stat.own;
  }
  return ticks / TICKS;
}

export const clientCpuSeconds = (usage: NodeJS.CpuUsage): number => (usage.user + usage.system) / 1e6;
