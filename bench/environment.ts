/**
 * Where the figures came from: machine, runtime and how busy the machine was.
 */
import { cpus, loadavg, totalmem } from 'node:os';

export interface Environment {
  readonly date: string;
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGb: number;
  readonly node: string;
  readonly platform: string;
  /** 1-minute load average when the benchmark started (other work skews the figures). */
  readonly loadAtStart: number;
  readonly gcExposed: boolean;
}

/**
 * @example
 * ```ts
 * describeEnvironment().cores; // 2
 * ```
 */
export function describeEnvironment(): Environment {
  const list = cpus();
  return {
    date: new Date().toISOString(),
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGb: Math.round(totalmem() / 1024 ** 3),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    loadAtStart: Number((loadavg()[0] ?? 0).toFixed(2)),
    gcExposed: typeof (globalThis as { gc?: unknown }).gc === 'function',
  };
}
