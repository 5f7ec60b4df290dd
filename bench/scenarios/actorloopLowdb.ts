/**
 * Contender (d): (c) plus the default file store (lowdb metadata + JSONL run log per run), so
 * every event, snapshot and tool result of every run is written to disk. The store lives in a
 * temporary folder that `cleanup()` removes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { actorloopContender } from './actorloop.ts';
import type { Contender } from './types.ts';

/**
 * @example
 * ```ts
 * const { contender, cleanup } = actorloopWithFileStore();
 * await contender.create({ n: 10, delayMs: 0 })();
 * cleanup();
 * ```
 */
export function actorloopWithFileStore(): { contender: Contender; dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'actorloop-bench-'));
  const contender = actorloopContender('actorloop_lowdb', '(d) actorloop + lowdb file store', () => ({
    store: createFileStore({ dir }),
  }));
  return { contender, dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
