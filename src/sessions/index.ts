export { emptySessionDocument, JsonValue, SESSION_LIMITS, SESSION_VERSION, SessionDocument, SessionRun } from './document.ts';

export { createMemorySessionStore, toRedactFn } from './store.ts';
export type { SessionRedact, SessionStore, SessionStoreOptions } from './store.ts';
export { openSessionStore } from './fileStore.ts';
export type { FileSessionStore, SessionFileOptions } from './fileStore.ts';
export type { RedactFn, SessionHandle, SessionMemory, SessionTurn } from './handle.ts';
export { sessionFileName } from './validate.ts';

export { SessionError } from './errors.ts';
