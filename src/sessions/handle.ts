/** Changes apply one at a time and only once saved, so what the handle shows is what the backend holds. */
import type { SessionMemory } from '../core/sessionMemory.ts';
import type { Message } from '../core/messages.ts';
import { createChangeQueue, type Change } from '../persistence/changeQueue.ts';
import { SESSION_VERSION, type JsonValue, type SessionDocument, type SessionRun } from './document.ts';
import { checkMemoryName, checkMemoryValue, checkRedactedMessages, checkTurn } from './validate.ts';
import { SessionError } from './errors.ts';

export interface SessionTurn {
  readonly runId: string;
  /** Only the messages the run added, not the history it was given. */
  readonly messages: readonly Message[];
}

export type { SessionMemory } from '../core/sessionMemory.ts';

/** While it is open, no other handle in any process can open the same session. */
export interface SessionHandle {
  readonly id: string;
  /** `undefined` for a memory store. */
  readonly file: string | undefined;
  messages(): Message[];
  runs(): SessionRun[];
  /** A run appends once: again rejects with `SessionError` (`session_run_recorded`). */
  appendTurn(turn: SessionTurn): Promise<void>;
  /** A view: cheap to ask for again. */
  memory(namespace: string): SessionMemory;
  /** Idempotent; later calls throw `SessionError` (`session_closed`). */
  close(): Promise<void>;
}

export interface SessionBackend {
  readonly file: string | undefined;
  save(document: SessionDocument): Promise<void>;
  release(): void;
  /** Set once another process took the lock over. */
  lost(): string | undefined;
}

export type RedactFn = <T>(value: T) => T;

interface State {
  readonly updatedAt: number;
  readonly messages: readonly Message[];
  readonly runs: readonly SessionRun[];
  readonly memory: ReadonlyMap<string, ReadonlyMap<string, JsonValue>>;
}

export function buildSessionHandle(id: string, document: SessionDocument, backend: SessionBackend, redact: RedactFn): SessionHandle {
  const { id: storedId, createdAt } = document;
  let state: State = {
    updatedAt: document.updatedAt,
    messages: document.messages,
    runs: document.runs,
    memory: new Map(Object.entries(document.memory).map(([namespace, entries]) => [namespace, new Map(Object.entries(entries))])),
  };
  const queue = createChangeQueue(() => new SessionError('session_closed', `Session "${id}" was closed. Open it again from its store to read or write it.`, { sessionId: id }));
  const assertOpen = queue.assertOpen;

  const toDocument = (next: State): SessionDocument => ({
    v: SESSION_VERSION,
    id: storedId,
    createdAt,
    updatedAt: next.updatedAt,
    messages: [...next.messages],
    runs: [...next.runs],
    memory: Object.fromEntries([...next.memory].map(([namespace, entries]) => [namespace, Object.fromEntries(entries)])),
  });

  function change<A, T>(prepare: () => A, compute: (current: State, input: A) => { next: State | undefined; result: T }): Promise<T> {
    return queue.change((input): Change<T> => {
      const lost = backend.lost();
      if (lost !== undefined) {
        throw new SessionError('session_locked', `Session "${id}" can no longer be written by this handle: ${lost}. Close it and open the session again.`, {
          sessionId: id,
          file: backend.file,
        });
      }
      const { next, result } = compute(state, input);
      if (next === undefined) return { result };
      return { result, write: () => backend.save(toDocument(next)), commit: () => (state = next) };
    }, prepare);
  }

  const withNamespace = (current: State, namespace: string, entries: ReadonlyMap<string, JsonValue>): State => {
    const memory = new Map(current.memory);
    if (entries.size === 0) memory.delete(namespace);
    else memory.set(namespace, entries);
    return { ...current, updatedAt: Date.now(), memory };
  };

  function memoryView(namespace: string): SessionMemory {
    return {
      namespace,
      get(key) {
        assertOpen();
        checkMemoryName('key', key, id);
        const value = state.memory.get(namespace)?.get(key);
        return value === undefined ? undefined : structuredClone(value);
      },
      set(key, value) {
        return change(
          () => {
            checkMemoryName('key', key, id);
            // The file format refuses this pair of names as it refuses such a pair inside a value.
            if (namespace === 'constructor' && key === 'prototype') {
              throw new SessionError('session_invalid_key', `Session "${id}": the key "prototype" cannot be stored in the namespace "constructor" (the session file format refuses that pair). Use another key or namespace.`, { sessionId: id });
            }
            checkMemoryValue(value, key, id);
            // A copy, so the caller changing its object later cannot change what was saved.
            const clean = redact({ [key]: structuredClone(value) })[key];
            checkMemoryValue(clean, key, id);
            return clean;
          },
          (current, clean) => {
            const entries = new Map(current.memory.get(namespace));
            entries.set(key, clean);
            return { next: withNamespace(current, namespace, entries), result: undefined };
          },
        );
      },
      delete(key) {
        return change(
          () => checkMemoryName('key', key, id),
          (current) => {
            const entries = current.memory.get(namespace);
            if (entries?.has(key) !== true) return { next: undefined, result: false };
            const rest = new Map(entries);
            rest.delete(key);
            return { next: withNamespace(current, namespace, rest), result: true };
          },
        );
      },
      entries() {
        assertOpen();
        return [...(state.memory.get(namespace) ?? [])].map(([key, value]): [string, JsonValue] => [key, structuredClone(value)]);
      },
    };
  }

  return {
    id,
    file: backend.file,
    messages() {
      assertOpen();
      return structuredClone([...state.messages]);
    },
    runs() {
      assertOpen();
      return state.runs.map((run) => ({ ...run }));
    },
    appendTurn(turn) {
      return change(
        () => {
          const { runId, messages } = checkTurn(turn, id);
          return { runId, messages: checkRedactedMessages(redact(messages), id) };
        },
        (current, { runId, messages }) => {
          if (current.runs.some((run) => run.runId === runId)) {
            throw new SessionError('session_run_recorded', 
              `Session "${id}" already holds the turn of run ${runId}; appending it again would repeat its messages. Append each run once, when it ends.`,
              { sessionId: id, runId },
            );
          }
          const at = Date.now();
          const next: State = { ...current, updatedAt: at, messages: [...current.messages, ...messages], runs: [...current.runs, { runId, at }] };
          return { next, result: undefined };
        },
      );
    },
    memory(namespace) {
      assertOpen();
      checkMemoryName('namespace', namespace, id);
      return memoryView(namespace);
    },
    close: () => queue.close(() => backend.release()),
  };
}
