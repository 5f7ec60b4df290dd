/**
 * The locked document under the knowledge, experience and session file stores: one writer per
 * file, the caller's own error for a second one, a fresh document only for a missing file, and a
 * stray temp file from a crashed write cleared under the lock.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { StoreError } from '../../src/persistence/errors.ts';
import { CorruptFileError } from '../../src/persistence/errors.ts';
import { openLockedDocument, type LockedDocument, type LockedDocumentOptions } from '../../src/persistence/lockedDocument.ts';

const Doc = z.object({ v: z.literal(1), items: z.array(z.string()) });
type Doc = z.infer<typeof Doc>;

class LockedForTest extends Error {
  constructor(
    readonly inThisProcess: boolean,
    readonly lockCause: StoreError,
  ) {
    super('locked');
  }
}

const options: LockedDocumentOptions<Doc> = {
  schema: Doc,
  version: 1,
  empty: () => ({ v: 1, items: [] }),
  owner: 'test',
  locked: (inThisProcess, cause) => new LockedForTest(inThisProcess, cause),
};

let dir: string;
let file: string;
const open: LockedDocument<Doc>[] = [];
const track = async (opening: Promise<LockedDocument<Doc>>): Promise<LockedDocument<Doc>> => {
  const doc = await opening;
  open.push(doc);
  return doc;
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'actorloop-locked-doc-'));
  file = join(dir, 'deeper', 'doc.json');
});
afterEach(() => {
  for (const doc of open.splice(0)) doc.release();
  rmSync(dir, { recursive: true, force: true });
});

describe('openLockedDocument', () => {
  it('starts from the empty document when the file is missing, and reads back what was saved', async () => {
    const first = await track(openLockedDocument(file, options));
    expect(first.data).toEqual({ v: 1, items: [] });
    expect(existsSync(file)).toBe(false);
    await first.save({ v: 1, items: ['a'] });
    first.release();
    const again = await track(openLockedDocument(file, options));
    expect(again.data).toEqual({ v: 1, items: ['a'] });
  });

  it('refuses a second writer in this process with the caller\'s error, saying where the holder is, and lets it in once released', async () => {
    const first = await track(openLockedDocument(file, options));
    const error = await openLockedDocument(file, options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockedForTest);
    expect((error as LockedForTest).inThisProcess).toBe(true);
    expect((error as LockedForTest).lockCause).toMatchObject({ code: 'run_locked' });
    first.release();
    await track(openLockedDocument(file, options));
  });

  it('refuses an untrusted file with the file untouched, and lets the next writer in', async () => {
    await track(openLockedDocument(file, options)).then((doc) => doc.release());
    writeFileSync(file, '{"v":1,"items":[1]}');
    await expect(openLockedDocument(file, options)).rejects.toBeInstanceOf(CorruptFileError);
    expect(readFileSync(file, 'utf8')).toBe('{"v":1,"items":[1]}');
    // The failed open let go of the lock.
    writeFileSync(file, '{"v":1,"items":["fixed"]}');
    expect((await track(openLockedDocument(file, options))).data.items).toEqual(['fixed']);
  });

  it('removes a stray temp file left by a crashed write', async () => {
    await track(openLockedDocument(file, options)).then((doc) => doc.release());
    const temp = join(dir, 'deeper', '.doc.json.tmp');
    writeFileSync(temp, '{"v":1,');
    await track(openLockedDocument(file, options));
    expect(existsSync(temp)).toBe(false);
  });

  it('refuses to write once another writer took its lock over, leaving the file as that writer has it', async () => {
    const doc = await track(openLockedDocument(file, { ...options, leaseMs: 300 }));
    await doc.save({ v: 1, items: ['mine'] });
    // What a process taking over a stale lock does first: the lock file is no longer ours.
    unlinkSync(`${file}.lock`);
    // The lease's renewal notices.
    await vi.waitFor(() => expect(doc.lost()).toBeDefined(), { timeout: 10_000, interval: 50 });
    writeFileSync(file, '{"v":1,"items":["theirs"]}');
    const error = await doc.save({ v: 1, items: ['mine', 'again'] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockedForTest);
    expect((error as LockedForTest).inThisProcess).toBe(false);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ v: 1, items: ['theirs'] });
  });
});
