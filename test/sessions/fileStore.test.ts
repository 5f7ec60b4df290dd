import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CorruptFileError } from '../../src/persistence/errors.ts';
import { SESSION_LIMITS } from '../../src/sessions/document.ts';
import { openSessionStore } from '../../src/sessions/fileStore.ts';
import { cleanUp, FAKE_KEY, openTracked, redactor, tempDir, user } from './support.ts';
import type { SessionError } from '../../src/sessions/errors.ts';

afterEach(cleanUp);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const HOLDER = join(ROOT, 'test/sessions/fixtures/holder.ts');

const document = (id: string, extra: Record<string, unknown> = {}) => ({ v: 1, id, createdAt: 1, updatedAt: 1, messages: [], runs: [], memory: {}, ...extra });
const nestedJson = (levels: number): string => `${'['.repeat(levels)}1${']'.repeat(levels)}`;

describe('file session store', () => {
  it('writes nothing until the first change, then one JSON document at fileOf(id)', async () => {
    const dir = tempDir();
    const store = openSessionStore({ dir });
    const session = await openTracked(store, 'support-42');
    const file = store.fileOf('support-42');
    expect(session.file).toBe(file);
    expect(existsSync(file)).toBe(false);
    await session.appendTurn({ runId: 'run_1', messages: [user('hi')] });
    await session.memory('notes').set('plan', ['a']);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({
      v: 1,
      id: 'support-42',
      messages: [user('hi')],
      runs: [{ runId: 'run_1' }],
      memory: { notes: { plan: ['a'] } },
    });
  });

  it('maps ids with slashes, dots, case and unicode to distinct files inside the folder', async () => {
    const dir = tempDir();
    const store = openSessionStore({ dir: join(dir, 'sessions') });
    const ids = ['a/b', 'a-b', 'a_b', '..', '.', '../../escape', '/etc/passwd', 'Alice', 'alice', 'héllo', 'he\u0301llo', '会话', '🙂', 'CON', 'x'.repeat(SESSION_LIMITS.idLength)];
    for (const [i, id] of ids.entries()) {
      const session = await openTracked(store, id);
      await session.memory('who').set('index', i);
      await session.close();
    }
    const files = ids.map((id) => store.fileOf(id));
    expect(new Set(files).size).toBe(ids.length);
    for (const file of files) expect(dirname(file)).toBe(join(dir, 'sessions'));
    expect(readdirSync(join(dir, 'sessions')).sort()).toEqual(files.map((f) => f.slice(join(dir, 'sessions').length + 1)).sort());
    expect(readdirSync(dir)).toEqual(['sessions']);
    for (const [i, id] of ids.entries()) {
      const session = await openTracked(store, id);
      expect(session.memory('who').get('index')).toBe(i);
      await session.close();
    }
  });

  it('keeps a readable part of the id in the file name', () => {
    const store = openSessionStore({ dir: tempDir() });
    expect(store.fileOf('Support/Ticket 42')).toMatch(/support-ticket-42-[0-9a-f]{32}\.json$/);
    expect(store.fileOf('会话')).toMatch(/session-[0-9a-f]{32}\.json$/);
  });

  it.each([
    ['invalid JSON', () => '{"v":1,"id":"s","messages":[', 'corrupt_file'],
    ['an empty file', () => '', 'corrupt_file'],
    ['NUL bytes', () => '\u0000\u0000\u0000', 'corrupt_file'],
    ['a message that fails its schema', () => JSON.stringify(document('s', { messages: [{ role: 'robot', content: 'x' }] })), 'corrupt_file'],
    ['a memory namespace that is not an object', () => JSON.stringify(document('s')).replace('"memory":{}', '"memory":{"n":"not a namespace"}'), 'corrupt_file'],
    ['a run recorded twice', () => JSON.stringify(document('s', { runs: [{ runId: 'r', at: 1 }, { runId: 'r', at: 2 }] })), 'corrupt_file'],
    ['a __proto__ key', () => JSON.stringify(document('s')).replace('"memory":{}', '"memory":{"__proto__":{"polluted":true}}'), 'corrupt_file'],
    ['a value nested past the limit', () => JSON.stringify(document('s', { memory: { n: { k: JSON.parse(nestedJson(SESSION_LIMITS.valueDepth + 1)) as unknown } } })), 'corrupt_file'],
    ['nesting too deep to parse', () => JSON.stringify(document('s')).replace('"memory":{}', `"memory":{"n":{"k":${nestedJson(200_000)}}}`), 'corrupt_file'],
    ['another session in the file', () => JSON.stringify(document('someone-else')), 'corrupt_file'],
    ['a future schema version', () => JSON.stringify({ ...document('s'), v: 2 }), 'unsupported_version'],
  ])('refuses a file with %s with a typed error naming it, and leaves its bytes unchanged', async (_name, content, expectedCode) => {
    const dir = tempDir();
    const store = openSessionStore({ dir });
    const file = store.fileOf('s');
    const text = content();
    writeFileSync(file, text);
    const error: unknown = await store.open('s').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: expectedCode });
    expect((error as CorruptFileError).file).toBe(file);
    expect((error as Error).message).toContain(file);
    expect(readFileSync(file, 'utf8')).toBe(text);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // Nothing was reset, and the lock was let go: once the file is fixed, the session opens.
    writeFileSync(file, JSON.stringify(document('s', { messages: [user('kept')] })));
    expect((await openTracked(store, 's')).messages()).toEqual([user('kept')]);
  });

  it('keeps secrets out of the file and its name when redacting, and only then', async () => {
    const id = `user ${FAKE_KEY}`;
    const write = async (redact: boolean) => {
      const store = openSessionStore({ dir: tempDir(), ...(redact ? { redact: redactor() } : {}) });
      const session = await openTracked(store, id);
      await session.appendTurn({ runId: 'run_1', messages: [user(`my key is ${FAKE_KEY}`), { role: 'tool', toolCallId: 'c1', content: `found ${FAKE_KEY}` }] });
      await session.memory('found').set('keys', [{ value: FAKE_KEY }]);
      await session.close();
      const file = store.fileOf(id);
      return { name: file, bytes: readFileSync(file, 'utf8'), store };
    };
    const redacted = await write(true);
    expect(redacted.bytes).not.toContain(FAKE_KEY);
    expect(redacted.bytes).not.toContain('sk-proj-');
    expect(redacted.name).not.toContain('sk-proj');
    expect(JSON.parse(redacted.bytes)).toMatchObject({ id: 'user [REDACTED]', messages: [user('my key is [REDACTED]'), { content: 'found [REDACTED]' }] });
    // The same id opens the same session again: its stored (redacted) id still matches.
    expect((await openTracked(redacted.store, id)).messages()).toHaveLength(2);

    // The default stores what it is given, so the check above is what redaction changed.
    const plain = await write(false);
    expect(plain.bytes.split(FAKE_KEY)).toHaveLength(5);
  });

  it('refuses a second store object on the same folder while a handle holds the session, naming the file', async () => {
    const dir = tempDir();
    const first = openSessionStore({ dir });
    const session = await openTracked(first, 'shared');
    const error = await openSessionStore({ dir }).open('shared').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'session_locked' });
    expect((error as SessionError).file).toBe(first.fileOf('shared'));
    expect((error as Error).message).toContain('in this process');
    await session.close();
    await openTracked(openSessionStore({ dir }), 'shared');
  });

  it('does not apply a change whose write fails, and writes again once the disk recovers', async () => {
    const dir = tempDir();
    const store = openSessionStore({ dir });
    const session = await openTracked(store, 'flaky');
    await session.appendTurn({ runId: 'run_1', messages: [user('saved')] });
    // A folder where lowdb writes its temp file makes the next write fail.
    const temp = join(dir, `.${store.fileOf('flaky').slice(dir.length + 1)}.tmp`);
    mkdirSync(temp);
    await expect(session.appendTurn({ runId: 'run_2', messages: [user('lost')] })).rejects.toThrow();
    await expect(session.memory('notes').set('k', 1)).rejects.toThrow();
    expect(session.messages()).toEqual([user('saved')]);
    expect(session.runs().map((r) => r.runId)).toEqual(['run_1']);
    expect(session.memory('notes').get('k')).toBeUndefined();
    rmSync(temp, { recursive: true });
    await session.appendTurn({ runId: 'run_2', messages: [user('retried')] });
    expect(JSON.parse(readFileSync(store.fileOf('flaky'), 'utf8')).messages).toEqual([user('saved'), user('retried')]);
  });

  it('removes a stray temp file left by a crash during a write', async () => {
    const dir = tempDir();
    const store = openSessionStore({ dir });
    const temp = join(dir, `.${store.fileOf('crashed').slice(dir.length + 1)}.tmp`);
    writeFileSync(temp, '{"v":1,');
    await openTracked(store, 'crashed');
    expect(existsSync(temp)).toBe(false);
  });

  it('refuses writes from a handle whose lock another process took over', async () => {
    const store = openSessionStore({ dir: tempDir(), leaseMs: 300 });
    const session = await openTracked(store, 'taken');
    // What a process taking over a stale session does first: the lock file is no longer ours.
    unlinkSync(`${store.fileOf('taken')}.lock`);
    await vi.waitFor(
      async () => {
        const error = await session.memory('notes').set('k', 1).catch((e: unknown) => e);
        expect(error).toMatchObject({ code: 'session_locked' });
      },
      { timeout: 10_000, interval: 50 },
    );
  });

  it('shares a session with another process: locked while it holds it, its turns visible after', async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, dir, 'cross-process'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let errors = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (errors += chunk));
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    try {
      await new Promise<void>((ready, fail) => {
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => chunk.includes('ready') && ready());
        void exited.then((code) => fail(new Error(`holder exited with ${String(code)}: ${errors}`)));
      });
      const error = await openSessionStore({ dir }).open('cross-process').catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'session_locked' });
      expect((error as Error).message).toContain('by another process');
      child.stdin.write('close\n');
      expect(await exited).toBe(0);
    } finally {
      child.kill();
    }
    const session = await openTracked(openSessionStore({ dir }), 'cross-process');
    expect(session.messages()).toEqual([user('from the other process')]);
    expect(session.runs().map((r) => r.runId)).toEqual(['run_child']);
    expect(session.memory('notes').get('writer')).toBe('child');
  });
});
