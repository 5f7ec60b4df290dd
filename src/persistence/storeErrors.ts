/**
 * The misuses every locked-document store shares: its file is held by another writer, it was
 * closed, or the item asked for is not in it. One class each; `code` says which store. Sessions
 * keep their own classes (`SessionLockedError`, `SessionClosedError`), which carry the session id.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';

/**
 * Another live process (or another open store in this one) writes the same store file; two
 * writers would lose each other's changes. Close the other store first.
 *
 * @example
 * ```ts
 * try { await openKnowledgeStore({ file }); }
 * catch (e) { if (e instanceof StoreLockedError && e.code === 'knowledge_store_locked') console.log('close the other store first', e.file); }
 * ```
 */
export class StoreLockedError extends ActorloopError {
  readonly code: 'knowledge_store_locked' | 'experience_store_locked';
  readonly blame = 'user' as const;
  readonly file: string;
  constructor(message: string, options: ActorloopErrorOptions & { readonly code: StoreLockedError['code']; readonly file: string }) {
    super(message, options);
    this.code = options.code;
    this.file = options.file;
  }
}

/**
 * The error for a store file whose lock another writer holds: `inThisProcess` says where.
 *
 * @example
 * ```ts
 * openLockedDocument(file, { …, locked: (inThisProcess, cause) => storeLockedError('knowledge', file, inThisProcess, cause) });
 * ```
 */
export function storeLockedError(store: 'knowledge' | 'experience', file: string, inThisProcess: boolean, cause: unknown): StoreLockedError {
  return new StoreLockedError(
    `${file} is already open for writing by another ${store} store (${inThisProcess ? 'in this process' : 'in another process'}). ` +
      'Share one store object, or close the other one before opening the file again.',
    { code: `${store}_store_locked`, file, cause },
  );
}

/**
 * The store was closed; open it again to change it.
 *
 * @example
 * ```ts
 * await store.close();
 * await store.add(item); // rejects with StoreClosedError, code 'knowledge_store_closed'
 * ```
 */
export class StoreClosedError extends ActorloopError {
  readonly code: 'knowledge_store_closed' | 'experience_store_closed';
  readonly blame = 'user' as const;
  constructor(message: string, options: ActorloopErrorOptions & { readonly code: StoreClosedError['code'] }) {
    super(message, options);
    this.code = options.code;
  }
}

/**
 * No item of the store has that id (it was never stored, or was removed).
 *
 * @example
 * ```ts
 * await experiences.accept('exp_missing'); // rejects with StoreItemNotFoundError, code 'experience_not_found', id 'exp_missing'
 * ```
 */
export class StoreItemNotFoundError extends ActorloopError {
  readonly code: 'experience_not_found';
  readonly blame = 'user' as const;
  readonly id: string;
  constructor(message: string, options: ActorloopErrorOptions & { readonly code: StoreItemNotFoundError['code']; readonly id: string }) {
    super(message, options);
    this.code = options.code;
    this.id = options.id;
  }
}
