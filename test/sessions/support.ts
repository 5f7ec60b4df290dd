/** Shared helpers for the session tests: temporary folders, both stores, and a fake secret. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Message } from '../../src/core/messages.ts';
import { createRedactor } from '../../src/security/redactor.ts';
import { openSessionStore } from '../../src/sessions/fileStore.ts';
import type { SessionHandle } from '../../src/sessions/handle.ts';
import { createMemorySessionStore, type SessionStore, type SessionStoreOptions } from '../../src/sessions/store.ts';

/** Shaped like an OpenAI project key, which the default redaction rules catch. */
export const FAKE_KEY = `sk-proj-${'Ab12'.repeat(8)}`;

/** The default rules only (no secrets from this machine's environment). */
export const redactor = () => createRedactor({}, {});

const made: string[] = [];
const opened: SessionHandle[] = [];

/** A fresh folder under the OS temp folder, removed by {@link cleanUp}. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'actorloop-sessions-'));
  made.push(dir);
  return dir;
}

/** Open a session and close it in {@link cleanUp} (closing twice is harmless). */
export async function openTracked(store: SessionStore, id: string): Promise<SessionHandle> {
  const handle = await store.open(id);
  opened.push(handle);
  return handle;
}

export async function cleanUp(): Promise<void> {
  for (const handle of opened.splice(0)) await handle.close();
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/**
 * A place sessions live, and a way to reach it again: for files, a new store object on the same
 * folder (as another process would); for memory, the same store object (all a process has).
 */
export interface StoreKind {
  readonly name: string;
  place(options?: SessionStoreOptions): { store(): SessionStore };
}

export const STORE_KINDS: readonly StoreKind[] = [
  {
    name: 'file store',
    place(options = {}) {
      const dir = tempDir();
      return { store: () => openSessionStore({ ...options, dir }) };
    },
  },
  {
    name: 'memory store',
    place(options = {}) {
      const store = createMemorySessionStore(options);
      return { store: () => store };
    },
  },
];

export const user = (content: string): Message => ({ role: 'user', content });
export const assistant = (content: string): Message => ({ role: 'assistant', content });
