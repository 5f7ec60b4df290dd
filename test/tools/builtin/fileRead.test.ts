/**
 * Paths: `file_read` stays inside its root against every escape, in a real
 * temporary folder tree with real symlinks; refusals are typed, say why, and never carry the
 * content of the file they protect.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../../src/agent/createAgent.ts';
import { ConfigurationError } from '../../../src/core/errors.ts';
import { scriptedModel } from '../../../src/testing/index.ts';
import { FileReadError } from '../../../src/tools/builtin/errors.ts';
import { fileRead } from '../../../src/tools/builtin/fileRead.ts';
import { toolContext } from './support.ts';

const CANARY = 'CANARY-7f3a9c-do-not-leak';
let base: string;
let root: string;

beforeAll(() => {
  base = mkdtempSync(path.join(tmpdir(), 'actorloop-fileread-'));
  root = path.join(base, 'root');
  mkdirSync(path.join(root, 'docs'), { recursive: true });
  mkdirSync(path.join(root, 'sub'));
  mkdirSync(path.join(base, 'outside'));
  mkdirSync(path.join(base, 'root-evil'));
  writeFileSync(path.join(root, 'docs', 'guide.md'), '# Guide\nInside the root.\n');
  writeFileSync(path.join(root, 'big.txt'), 'é'.repeat(5_000)); // 10 000 bytes of 2-byte characters
  writeFileSync(path.join(root, 'blob.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]));
  writeFileSync(path.join(base, 'outside', 'secret.txt'), CANARY);
  writeFileSync(path.join(base, 'root-evil', 'secret.txt'), CANARY);
  symlinkSync(path.join(base, 'outside', 'secret.txt'), path.join(root, 'link-out'));
  symlinkSync(path.join(base, 'outside'), path.join(root, 'dir-out'));
  symlinkSync('../outside/secret.txt', path.join(root, 'relative-link-out'));
  symlinkSync('docs/guide.md', path.join(root, 'link-in'));
  symlinkSync('../docs', path.join(root, 'sub', 'inner'));
  execFileSync('mkfifo', [path.join(root, 'pipe')]);
});

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

async function read(requested: string, maxBytes?: number): Promise<string> {
  return fileRead({ root, ...(maxBytes === undefined ? {} : { maxBytes }) }).execute({ path: requested }, toolContext());
}

async function failure(requested: string): Promise<Error> {
  const error: unknown = await read(requested).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof Error)) throw new Error(`expected ${JSON.stringify(requested)} to fail`);
  return error;
}

describe('file_read path battery', () => {
  it.each([
    ['../ escape', () => '../outside/secret.txt', 'traversal'],
    ['../ escape after a real folder', () => 'docs/../../outside/secret.txt', 'traversal'],
    ['sibling prefix, relative', () => '../root-evil/secret.txt', 'traversal'],
    ['sibling prefix, absolute', () => path.join(base, 'root-evil', 'secret.txt'), 'outside_root'],
    ['absolute path outside', () => path.join(base, 'outside', 'secret.txt'), 'outside_root'],
    ['/etc/passwd', () => '/etc/passwd', 'outside_root'],
    ['~', () => '~', 'home'],
    ['~/', () => '~/.ssh/id_rsa', 'home'],
    ['~user', () => '~root/.bashrc', 'home'],
    ['NUL byte', () => 'docs/guide.md\0.png', 'nul_byte'],
    ['C:\\', () => 'C:\\Windows\\win.ini', 'windows_path'],
    ['C:/', () => 'C:/Windows/win.ini', 'windows_path'],
    ['UNC \\\\server', () => '\\\\server\\share\\x', 'windows_path'],
    ['UNC //server', () => '//server/share/x', 'windows_path'],
    ['backslash traversal', () => '..\\outside\\secret.txt', 'windows_path'],
    ['symlinked file pointing outside', () => 'link-out', 'symlink_escape'],
    ['relative symlink pointing outside', () => 'relative-link-out', 'symlink_escape'],
    ['symlinked folder in the middle', () => 'dir-out/secret.txt', 'symlink_escape'],
    ['empty path', () => '  ', 'empty'],
  ])('refuses %s', async (_label, requested, reason) => {
    const error = await failure(requested());
    expect(error).toMatchObject({ code: 'path_refused' });
    expect((error as FileReadError).reason).toBe(reason);
    expect(error.message).toContain('file_read refused');
    expect(error.message).not.toContain(CANARY);
    expect(JSON.stringify(error)).not.toContain(CANARY);
  });

  it.each([
    ['a relative path', () => 'docs/guide.md'],
    ['a ./ path', () => './docs/guide.md'],
    ['.. that stays inside', () => 'docs/../docs/guide.md'],
    ['an absolute path inside the root', () => path.join(root, 'docs', 'guide.md')],
    ['a symlink that stays inside', () => 'link-in'],
    ['a symlinked folder that stays inside', () => 'sub/inner/guide.md'],
  ])('reads %s', async (_label, requested) => {
    expect(await read(requested())).toBe('# Guide\nInside the root.\n');
  });
});

describe('file_read results and failures', () => {
  it('reports a missing file as not_found', async () => {
    const error = await failure('docs/missing.md');
    expect(error).toBeInstanceOf(FileReadError);
    expect((error as FileReadError).reason).toBe('not_found');
  });

  it.each([
    ['a folder', 'docs'],
    ['a named pipe (without blocking on it)', 'pipe'],
  ])('refuses to read %s', async (_label, requested) => {
    const error = await failure(requested);
    expect([error.constructor, (error as FileReadError).reason]).toEqual([FileReadError, 'not_a_file']);
  });

  it('cuts long files at maxBytes on a character boundary, with a marker', async () => {
    const text = await read('big.txt', 1_001);
    expect(text).toBe(`${'é'.repeat(500)}\n[truncated: showing 1001 of 10000 bytes]`);
  });

  it('describes binary files instead of returning bytes', async () => {
    expect(await read('blob.bin')).toBe('[binary: 6 bytes, image/png; hex: 89 50 4e 47 00 ff]');
  });

  it('fails at creation when the root does not exist', () => {
    expect(() => fileRead({ root: path.join(base, 'nope') })).toThrow(ConfigurationError);
    expect(() => fileRead({ root, maxBytes: -1 })).toThrow(ConfigurationError);
  });

  it('hands refusals to the model as observations, without the protected content', async () => {
    const model = scriptedModel([{ toolCalls: [{ name: 'file_read', arguments: { path: '../outside/secret.txt' } }] }, { text: 'cannot' }]);
    const agent = createAgent({ model, tools: [fileRead({ root })] });
    const result = await agent.run('read the secret');
    const observation = model.calls[1]!.messages.find((m) => m.role === 'tool');
    expect(observation?.content).toContain('file_read refused "../outside/secret.txt": it climbs out of the root folder');
    expect(JSON.stringify(result.messages)).not.toContain(CANARY);
    expect(JSON.stringify(agent.journal.entries(result.runId))).not.toContain(CANARY);
  });
});
