/**
 * `file_read` between its check and its read: a folder on the checked path swapped for a symlink to
 * outside the root (by another process with write access) must not be followed. The swap happens
 * right after the tool resolved the path, so the race is won every time instead of by luck.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FileReadError } from '../../../src/tools/builtin/errors.ts';
import { fileRead } from '../../../src/tools/builtin/fileRead.ts';
import { toolContext } from './support.ts';

// Runs once after `realpath` resolved the path it names, before the caller goes on.
const afterResolve = vi.hoisted(() => ({ hooks: new Map<string, () => void>() }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof FsPromises>();
  const realpath = (async (target: string) => {
    const real = await fs.realpath(target);
    const hook = afterResolve.hooks.get(String(target));
    afterResolve.hooks.delete(String(target));
    hook?.();
    return real;
  }) as typeof fs.realpath;
  return { ...fs, default: { ...fs, realpath }, realpath };
});

const CANARY = 'CANARY-race-5d1e-do-not-leak';
let base: string;
let root: string;

beforeAll(() => {
  base = mkdtempSync(path.join(tmpdir(), 'actorloop-fileread-race-'));
  root = path.join(base, 'root');
  mkdirSync(path.join(root, 'notes'), { recursive: true });
  mkdirSync(path.join(base, 'outside'));
  writeFileSync(path.join(root, 'notes', 'todo.txt'), 'inside');
  writeFileSync(path.join(base, 'outside', 'todo.txt'), CANARY);
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('file_read against a path swapped after its check', () => {
  it('refuses a file whose folder became a symlink to outside the root after the check', async () => {
    const tool = fileRead({ root });
    const notes = path.join(root, 'notes');
    afterResolve.hooks.set(path.join(root, 'notes', 'todo.txt'), () => {
      renameSync(notes, path.join(root, 'notes-moved'));
      symlinkSync(path.join(base, 'outside'), notes);
    });
    const reading = tool.execute({ path: 'notes/todo.txt' }, toolContext());
    await expect(reading).rejects.toBeInstanceOf(FileReadError);
    await expect(reading).rejects.toMatchObject({ code: 'path_refused', reason: 'symlink_escape' });
    await expect(reading).rejects.not.toThrow(CANARY);
  });

  it('still reads a file whose path did not change', async () => {
    const tool = fileRead({ root });
    writeFileSync(path.join(base, 'root', 'plain.txt'), 'plain text');
    await expect(tool.execute({ path: 'plain.txt' }, toolContext())).resolves.toBe('plain text');
  });
});
