/**
 * Knowledge store errors. A corrupt or future-version store file is reported with the shared
 * persistence errors (`CorruptFileError`, `UnsupportedVersionError`) and is never replaced by
 * an empty store.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';

/**
 * Another live process (or another open store in this one) writes the same knowledge file; two
 * writers would lose each other's items.
 *
 * @example
 * ```ts
 * try { await openKnowledgeStore({ file }); }
 * catch (e) { if (e instanceof KnowledgeStoreLockedError) console.log('close the other store first', e.file); }
 * ```
 */
export class KnowledgeStoreLockedError extends ActorloopError {
  readonly code = 'knowledge_store_locked' as const;
  readonly blame = 'user' as const;
  readonly file: string;
  constructor(message: string, options: ActorloopErrorOptions & { readonly file: string }) {
    super(message, options);
    this.file = options.file;
  }
}

/**
 * The store was closed; open it again to read or write.
 *
 * @example
 * ```ts
 * await store.close();
 * await store.add(item); // rejects with KnowledgeStoreClosedError
 * ```
 */
export class KnowledgeStoreClosedError extends ActorloopError {
  readonly code = 'knowledge_store_closed' as const;
  readonly blame = 'user' as const;
}
