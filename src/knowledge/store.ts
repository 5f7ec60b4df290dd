/** Changes apply one at a time and a failed persist undoes its change, so what search sees is what the file holds. */
import { randomUUID } from 'node:crypto';
import { ConfigurationError } from '../core/errors.ts';
import { createChangeQueue, type Change } from '../persistence/changeQueue.ts';
import { normaliseDirectory } from './directory.ts';
import { contentKey, KnowledgeItem, NewKnowledgeItem, placementKey } from './item.ts';
import { KnowledgeIndex } from './searchIndex.ts';
import { termsOf } from './terms.ts';
import { StoreError } from '../persistence/errors.ts';

export interface KnowledgeSearchOptions {
  /** Default: all that pass `minRelevance`. */
  readonly limit?: number;
  /** Default 0 (any lexical match). */
  readonly minRelevance?: number;
  /** Applied before `limit`. */
  readonly filter?: (item: KnowledgeItem) => boolean;
}

export interface ScoredKnowledgeItem {
  readonly item: KnowledgeItem;
  /** 0..1, comparable across queries and stores (see searchIndex.ts). */
  readonly relevance: number;
  /** BM25+: unbounded, comparable only within one query. */
  readonly score: number;
}

export interface KnowledgeAddOptions {
  /** Removed in the same write (e.g. an older answer to the same task). */
  readonly replace?: (existing: KnowledgeItem) => boolean;
}

export interface KnowledgeStore {
  readonly size: number;
  /** Oldest first. */
  items(): readonly KnowledgeItem[];
  get(id: string): KnowledgeItem | undefined;
  /**
 * An item with the same subject, predicate and object (ignoring case and spacing) in the same place is
 * refreshed instead, keeping its id, so repeating a fact never duplicates it.
 */
  add(input: NewKnowledgeItem, options?: KnowledgeAddOptions): Promise<KnowledgeItem>;
  /** Resolves to false when there was none. */
  remove(id: string): Promise<boolean>;
  search(query: string, options?: KnowledgeSearchOptions): ScoredKnowledgeItem[];
  /** Later changes reject. */
  close(): Promise<void>;
}

export interface KnowledgePersistence {
  save(items: readonly KnowledgeItem[]): Promise<void>;
  close(): void;
}

/**
 * @example
 * const store = createMemoryKnowledgeStore([{ subject: 'Earth', predicate: 'has', object: 'one moon', confidence: 0.9 }]);
 */
export function createMemoryKnowledgeStore(initial: readonly NewKnowledgeItem[] = []): KnowledgeStore {
  const store = buildKnowledgeStore([]);
  // Synchronous seeding: nothing to persist, and callers want the items searchable at once.
  for (const input of initial) store.seed(prepare(input));
  return store;
}

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

/** Throws ConfigurationError naming each problem. */
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
