/**
 * Contender (d): (c) plus the default file store, so every event, snapshot and tool result of
 * every run is appended to its JSONL log on disk. (The issue calls it "the lowdb journal": lowdb
 * rewrites a whole document per write, so the store keeps lowdb for a run's small meta.json, which
 * only a run that waits for a human gets, and appends everything else.) The store lives in a
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
  const contender = actorloopContender('actorloop_file', '(d) actorloop + file store (JSONL run log)', () => ({
    store: createFileStore({ dir }),
  }));
  return { contender, dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
