/**
 * The misuses every locked-document store shares: its file is held by another writer, it was
 * closed, or the item asked for is not in it — `StoreError`s whose `code` says which store.
 */
import { StoreError } from './errors.ts';

/**
 * The error for a store file whose lock another writer holds: `inThisProcess` says where.
 *
 * @example
 * ```ts
 * openLockedDocument(file, { …, locked: (inThisProcess, cause) => storeLockedError('knowledge', file, inThisProcess, cause) });
 * ```
 */
export function storeLockedError(store: 'knowledge' | 'experience', file: string, inThisProcess: boolean, cause: unknown): StoreError {
  return new StoreError(
    `${store}_store_locked`,
    `${file} is already open for writing by another ${store} store (${inThisProcess ? 'in this process' : 'in another process'}). ` +
      'Share one store object, or close the other one before opening the file again.',
    { file, cause },
  );
}
