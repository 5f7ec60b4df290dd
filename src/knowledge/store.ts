/**
 * The knowledge store: items in memory, a search index over them, and (for the file-backed
 * store) a persist step after every change. Changes are applied one at a time, in call order;
 * each resolves once persisted, and a failed persist undoes its change, so what search sees is
 * what the file holds.
 */
import { randomUUID } from 'node:crypto';
import { ConfigurationError } from '../core/errors.ts';
import { createChangeQueue, type Change } from '../persistence/changeQueue.ts';
import { normaliseDirectory } from './directory.ts';
import { contentKey, KnowledgeItem, NewKnowledgeItem, placementKey } from './item.ts';
import { KnowledgeIndex } from './searchIndex.ts';
import { termsOf } from './terms.ts';
import { StoreError } from '../persistence/errors.ts';

/** Options of `store.search`. */
export interface KnowledgeSearchOptions {
  /** Most results returned. Default: all that pass `minRelevance`. */
  readonly limit?: number;
  /** Least normalised relevance (0..1) a result needs. Default 0 (any lexical match). */
  readonly minRelevance?: number;
  /** Only items this accepts are considered (applied before `limit`). */
  readonly filter?: (item: KnowledgeItem) => boolean;
}

/** A search result. */
export interface ScoredKnowledgeItem {
  readonly item: KnowledgeItem;
  /** 0..1, comparable across queries and stores (see searchIndex.ts for the formula). */
  readonly relevance: number;
  /** The library's BM25+ score: unbounded, comparable only within one query. */
  readonly score: number;
}

/** Options of `store.add`. */
export interface KnowledgeAddOptions {
  /** Items this returns true for are removed in the same write (e.g. an older answer to the same task). */
  readonly replace?: (existing: KnowledgeItem) => boolean;
}

/**
 * Knowledge items with ranked lexical search. Created by `createMemoryKnowledgeStore` (tests,
 * short-lived agents) or `openKnowledgeStore` (a lowdb JSON file).
 *
 * @example
 * ```ts
 * const store = createMemoryKnowledgeStore();
 * await store.add({ subject: 'France', predicate: 'has capital', object: 'Paris', confidence: 0.95, scope: 'fact' });
 * store.search('capital of France', { limit: 5, minRelevance: 0.3 })[0]?.item.object; // 'Paris'
 * ```
 */
export interface KnowledgeStore {
  /** Number of items. */
  readonly size: number;
  /** Every item, oldest first. */
  items(): readonly KnowledgeItem[];
  get(id: string): KnowledgeItem | undefined;
  /**
   * Store an item; resolves once persisted. An item saying the same thing (same subject,
   * predicate and object, ignoring case and spacing) in the same place (scope, directory,
   * language) is refreshed instead — same id, new confidence, time and source — so repeating a
   * fact never duplicates it. `directory` is normalised (`./src/api/` → `src/api`).
   */
  add(input: NewKnowledgeItem, options?: KnowledgeAddOptions): Promise<KnowledgeItem>;
  /** Remove an item; resolves to false when there was none. */
  remove(id: string): Promise<boolean>;
  /** Items matching `query`, most relevant first. */
  search(query: string, options?: KnowledgeSearchOptions): ScoredKnowledgeItem[];
  /** Wait for pending writes and release the file (if any). Later changes reject. */
  close(): Promise<void>;
}

/** How a store backend saves the whole item list (the memory store saves nothing). */
export interface KnowledgePersistence {
  save(items: readonly KnowledgeItem[]): Promise<void>;
  close(): void;
}

/**
 * A store kept in memory only: for tests and agents that need no memory across processes.
 *
 * @example
 * ```ts
 * const store = createMemoryKnowledgeStore([{ subject: 'Earth', predicate: 'has', object: 'one moon', confidence: 0.9 }]);
 * store.size; // 1
 * ```
 */
export function createMemoryKnowledgeStore(initial: readonly NewKnowledgeItem[] = []): KnowledgeStore {
  const store = buildKnowledgeStore([]);
  // Synchronous seeding: nothing to persist, and callers want the items searchable at once.
  for (const input of initial) store.seed(prepare(input));
  return store;
}

/**
 * The store over already-validated items, with an optional persistence backend. Internal to the
 * knowledge folder (the file store builds on it).
 *
 * @example
 * ```ts
 * const store = buildKnowledgeStore(document.items, { save: (items) => writeFile(items), close: () => {} });
 * ```
 */
export function buildKnowledgeStore(
  initial: readonly KnowledgeItem[],
  persistence?: KnowledgePersistence,
): KnowledgeStore & { seed(item: KnowledgeItem): void } {
  const byId = new Map<string, KnowledgeItem>();
  /** Content + placement → id: what makes two items the same. */
  const byKey = new Map<string, string>();
  const index = new KnowledgeIndex();
  const queue = createChangeQueue(
    () => new StoreError('knowledge_store_closed', 'The knowledge store is closed. Open it again (openKnowledgeStore) before adding or removing items.'),
  );
  const save = persistence === undefined ? undefined : () => persistence.save([...byId.values()]);

  const put = (item: KnowledgeItem): void => {
    byId.set(item.id, item);
    byKey.set(identity(item), item.id);
    index.add(item);
  };
  const drop = (id: string): void => {
    const item = byId.get(id);
    if (item === undefined) return;
    byId.delete(id);
    if (byKey.get(identity(item)) === id) byKey.delete(identity(item));
    index.discard(id);
  };
  /** Put `fresh`, or refresh the item saying the same thing in the same place (keeping its id). */
  const upsert = (fresh: KnowledgeItem): { item: KnowledgeItem; existing: KnowledgeItem | undefined } => {
    const existingId = byKey.get(identity(fresh));
    const existing = existingId === undefined ? undefined : byId.get(existingId);
    const item: KnowledgeItem = Object.freeze(existing === undefined ? fresh : { ...fresh, id: existing.id });
    put(item);
    return { item, existing };
  };
  for (const item of initial) upsert(Object.freeze({ ...item }));

  return {
    get size() {
      return byId.size;
    },
    items: () => [...byId.values()],
    get: (id) => byId.get(id),
    seed: (item) => void upsert(item),
    add(input, options = {}) {
      return queue.change((fresh): Change<KnowledgeItem> => {
        const sameId = byKey.get(identity(fresh));
        const replace = options.replace;
        const replaced = replace === undefined ? [] : [...byId.values()].filter((i) => i.id !== sameId && replace(i));
        for (const old of replaced) drop(old.id);
        const { item, existing } = upsert(fresh);
        const undo = (): void => {
          if (existing === undefined) drop(item.id);
          else put(existing);
          for (const old of replaced) put(old);
        };
        return { result: item, write: save, undo };
      }, () => prepare(input));
    },
    remove(id) {
      return queue.change((): Change<boolean> => {
        const existing = byId.get(id);
        if (existing !== undefined) drop(id);
        return { result: existing !== undefined, write: save, undo: () => existing !== undefined && put(existing) };
      });
    },
    search(query, options = {}) {
      const limit = options.limit ?? Infinity;
      const minRelevance = options.minRelevance ?? 0;
      if (!(limit === Infinity || (Number.isInteger(limit) && limit >= 0))) {
        throw new ConfigurationError(`search limit must be a non-negative integer (got ${String(limit)}).`);
      }
      if (!(minRelevance >= 0 && minRelevance <= 1)) {
        throw new ConfigurationError(`search minRelevance must be between 0 and 1 (got ${String(minRelevance)}).`);
      }
      const filter = options.filter;
      const hits = index.search(termsOf(query), filter === undefined ? undefined : (id) => {
        const item = byId.get(id);
        return item !== undefined && filter(item);
      });
      const results: ScoredKnowledgeItem[] = [];
      for (const hit of hits) {
        // Sorted by relevance: the first one under the bar ends the list.
        if (results.length >= limit || hit.relevance < minRelevance) break;
        const item = byId.get(hit.id);
        if (item !== undefined) results.push({ item, relevance: hit.relevance, score: hit.score });
      }
      return results;
    },
    close: () => queue.close(() => persistence?.close()),
  };
}

function identity(item: KnowledgeItem): string {
  return `${contentKey(item)}\u0001${placementKey(item)}`;
}

/** Validate and normalise a new item; throws ConfigurationError naming each problem. */
function prepare(input: NewKnowledgeItem): KnowledgeItem {
  const parsed = NewKnowledgeItem.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(item)'}: ${i.message}`).join('; ');
    throw new ConfigurationError(`Invalid knowledge item (${issues}). Give non-empty subject, predicate and object and a confidence between 0 and 1.`);
  }
  const { createdAt, directory, language, ...rest } = parsed.data;
  const item: KnowledgeItem = {
    ...rest,
    id: `k_${randomUUID().replace(/-/g, '').slice(0, 16)}`,
    subject: rest.subject.trim(),
    predicate: rest.predicate.trim(),
    object: rest.object.trim(),
    createdAt: createdAt ?? Date.now(),
    ...(directory === undefined ? {} : { directory: normaliseDirectory(directory) }),
    ...(language === undefined || language.trim() === '' ? {} : { language: language.trim().toLowerCase() }),
  };
  if (item.subject === '' || item.predicate === '' || item.object === '') {
    throw new ConfigurationError('Invalid knowledge item: subject, predicate and object must contain more than whitespace.');
  }
  return KnowledgeItem.parse(item);
}
