/**
 * Sessions: multi-turn conversations persisted across runs and processes, each with a namespaced
 * key-value memory that tools read and write. A store opens a session for one writer at a time;
 * the handle appends each run's new messages and records the run, and every change is saved
 * (redacted first) before it resolves. Corrupt or newer files are refused, never reset.
 *
 * @example
 * ```ts
 * import { openSessionStore } from './sessions/index.ts';
 * const store = openSessionStore({ dir: '.actorloop/sessions', redact: createRedactor() });
 * const session = await store.open('support-42');
 * try {
 *   const history = session.messages();
 *   await session.appendTurn({ runId: 'run_7', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] });
 *   await session.memory('notes').set('language', 'French');
 * } finally {
 *   await session.close();
 * }
 * ```
 */

// The document
export { emptySessionDocument, JsonValue, SESSION_LIMITS, SESSION_VERSION, SessionDocument, SessionRun } from './document.ts';

// Stores and handles
export { createMemorySessionStore, toRedactFn } from './store.ts';
export type { SessionRedact, SessionStore, SessionStoreOptions } from './store.ts';
export { openSessionStore } from './fileStore.ts';
export type { FileSessionStore, SessionFileOptions } from './fileStore.ts';
export type { RedactFn, SessionHandle, SessionMemory, SessionTurn } from './handle.ts';
export { sessionFileName } from './validate.ts';

// Errors
export { SessionError } from './errors.ts';
