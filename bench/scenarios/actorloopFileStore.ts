/**
 * Contenders (d) and (e): (c) plus the default file store in a temporary folder that `cleanup()`
 * removes. The bench removes it only when every figure is taken: on ext4 without a journal (this
 * VM's disk), creating a file skips inodes freed in the last 30-odd seconds, one lookup each, so
 * after a clean-up of thousands of run logs a creation measured 80–1 300 µs instead of 20–30 µs
 * (`perf`: the time is in `recently_deleted` under `ext4_create`). Removing files between
 * measurements would charge the next runs' log creation for the bench's own clean-up.
 * - (d) `mode: 'journal'`: every journal entry of every run appended in the background to the
 *   store's journal segment (the run ids are the store's: its runs share one JSONL file) — the
 *   journal writer the targets call "the lowdb journal" (lowdb rewrites a whole document per
 *   write, so the store keeps lowdb for a run's small meta.json and appends the log).
 * - (e) `mode: 'resumable'` (the store's default): the journal plus what a resume rebuilds the run
 *   from (each model reply and gate decision) and a write-ahead record before every tool call
 *   with its outcome as soon as it ends, appended synchronously, so a killed run resumes with
 *   each tool effect made once. Measured beside (d); what crash-safe resume costs per iteration.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { actorloopContender } from './actorloop.ts';
import type { Contender } from './types.ts';

export type FileStoreContender = 'actorloop_journal' | 'actorloop_file';

/**
 * @example
 * ```ts
 * const { contender, cleanup } = actorloopWithFileStore('actorloop_journal');
 * await contender.create({ n: 10, delayMs: 0 })();
 * cleanup();
 * ```
 */
export function actorloopWithFileStore(id: FileStoreContender, root = tmpdir()): { contender: Contender; dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(root, `${id}-`));
  const contender =
    id === 'actorloop_journal'
      ? actorloopContender(id, '(d) actorloop + file journal (mode: journal, written in the background)', () => ({
          store: createFileStore({ dir, mode: 'journal' }),
        }))
      : actorloopContender(id, '(e) actorloop + resumable file store (journal, replies, write-ahead tool records)', () => ({
          store: createFileStore({ dir }),
        }));
  return { contender, dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
