/**
 * Where the figures came from: machine, runtime and how busy the machine was.
 */
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
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
   * Median µs to create (and, separately, to remove) a small file that stays in the OS temp folder,
   * where contenders (d) and (e) keep their stores. A new run creates a file; on a virtual disk this latency swings
   * by an order of magnitude from one hour to the next, and their cost per run with it.
   */
  readonly fileCreateUs: number;
  readonly fileRemoveUs: number;
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
    ...measureFileLatency(),
  };
}

function measureFileLatency(count = 200): { fileCreateUs: number; fileRemoveUs: number } {
  const dir = mkdtempSync(join(tmpdir(), 'actorloop-bench-fs-'));
  const creates: number[] = [];
  const removes: number[] = [];
  try {
    // Files that stay, each with a line in it, as runs' logs do: creating a file and removing it
    // at once is far cheaper on ext4 than creating one that remains.
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      const fd = openSync(join(dir, `f${i}`), 'wx');
      creates.push((performance.now() - started) * 1000);
      writeSync(fd, '{"kind":"run"}\n');
      closeSync(fd);
    }
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      unlinkSync(join(dir, `f${i}`));
      removes.push((performance.now() - started) * 1000);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const median = (xs: number[]) => Number((xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0).toFixed(1));
  return { fileCreateUs: median(creates), fileRemoveUs: median(removes) };
}
