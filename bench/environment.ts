/**
 * Where the figures came from: machine, runtime and how busy the machine was.
 */
import { closeSync, mkdtempSync, openSync, writeSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';

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
  /**
   * Median µs to create a small file that stays, in the folder where durable mode (d) keeps
   * its store. A new run creates files; on a virtual disk this latency swings by an order of
   * magnitude from one hour to the next, and (d)'s cost per run with it.
   */
  readonly fileCreateUs: number;
}

/**
 * `scratch` is a folder for the file probe's files; the caller removes it when the bench ends.
 *
 * @example
 * ```ts
 * describeEnvironment(mkdtempSync(join(tmpdir(), 'bench-'))).cores; // 2
 * ```
 */
export function describeEnvironment(scratch: string): Environment {
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
    fileCreateUs: measureFileCreation(scratch),
  };
}

function measureFileCreation(scratch: string, count = 200): number {
  const dir = mkdtempSync(join(scratch, 'fs-probe-'));
  const creates: number[] = [];
  // Files that stay, each with a line in it, as runs' logs do; not removed here (see scenarios/actorloop.ts).
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const fd = openSync(join(dir, `f${i}`), 'wx');
    creates.push((performance.now() - started) * 1000);
    writeSync(fd, '{"kind":"run"}\n');
    closeSync(fd);
  }
  return Number((creates.sort((a, b) => a - b)[Math.floor(count / 2)] ?? 0).toFixed(1));
}
