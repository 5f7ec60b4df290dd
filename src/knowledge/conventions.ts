/**
 * Directory-scoped conventions: the conventions that hold for a directory are those stored
 * for it, then for each parent up to the project root, then the language-level ones — most
 * specific first, so a rule for `src/api` outranks the project-wide one it refines.
 *
 * Levels, in order:
 * 1. `directory` — conventions stored for the directory itself;
 * 2. `parent`    — for each parent, nearest first;
 * 3. `root`      — for the project root (`directory: ''`), or with neither directory nor language;
 * 4. `language`  — with a language and no directory, only those the query matches (the query
 *    names the language: `"rust"`, `"typescript error handling"`); conventions of unrelated
 *    languages never apply.
 * Every convention of levels 1–3 applies to the directory whether or not the query mentions it;
 * within a level the query orders them (then confidence, then recency). Items saying the same
 * thing are kept once, at their most specific level; the list is cut to `limit`.
 */
import { DEFAULTS } from '../core/defaults.ts';
import { ConfigurationError } from '../core/errors.ts';
import { directoryChain } from './directory.ts';
import { contentKey, type KnowledgeItem } from './item.ts';
import type { KnowledgeStore, ScoredKnowledgeItem } from './store.ts';

/** Where a resolved convention came from. */
export type ConventionLevel = 'directory' | 'parent' | 'root' | 'language';

/** A convention found for a directory. */
export interface ScopedConvention extends ScoredKnowledgeItem {
  readonly level: ConventionLevel;
}

/** What `resolveConventions` takes. */
export interface ConventionQuery {
  /** Project-relative directory (`src/api/handlers`); any spelling, see `normaliseDirectory`. */
  readonly directory: string;
  /** Orders conventions within a level and selects the language level. */
  readonly query: string;
  /** Default `DEFAULTS.knowledge.recallLimit`. */
  readonly limit?: number;
}

const isConvention = (item: KnowledgeItem): boolean => item.scope === 'conventions';

/**
 * The conventions that apply to a directory, most specific first.
 *
 * @example
 * ```ts
 * resolveConventions(store, { directory: 'src/api/handlers', query: 'typescript', limit: 10 })
 *   .map((c) => `${c.level}: ${c.item.object}`);
 * // ['directory: one handler per file', 'parent: validate input with zod', 'root: ESM only', 'language: no any']
 * ```
 */
export function resolveConventions(store: KnowledgeStore, request: ConventionQuery): ScopedConvention[] {
  const limit = request.limit ?? DEFAULTS.knowledge.recallLimit;
  if (!(Number.isInteger(limit) && limit >= 0)) {
    throw new ConfigurationError(`resolveConventions limit must be a non-negative integer (got ${String(limit)}).`);
  }
  const matched = new Map<string, ScoredKnowledgeItem>();
  for (const hit of store.search(request.query, { filter: isConvention })) matched.set(hit.item.id, hit);
  const scored = (item: KnowledgeItem): ScoredKnowledgeItem => matched.get(item.id) ?? { item, relevance: 0, score: 0 };

  const byDirectory = new Map<string, KnowledgeItem[]>();
  const language: KnowledgeItem[] = [];
  for (const item of store.items()) {
    if (!isConvention(item)) continue;
    const directory = item.directory ?? (item.language === undefined ? '' : undefined);
    if (directory === undefined) {
      if (matched.has(item.id)) language.push(item);
      continue;
    }
    const list = byDirectory.get(directory);
    if (list === undefined) byDirectory.set(directory, [item]);
    else list.push(item);
  }

  const out: ScopedConvention[] = [];
  const seen = new Set<string>();
  const take = (items: readonly KnowledgeItem[], level: ConventionLevel): void => {
    for (const hit of items.map(scored).sort(byRelevance)) {
      if (out.length >= limit) return;
      const key = contentKey(hit.item);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ ...hit, level });
    }
  };
  const chain = directoryChain(request.directory);
  chain.forEach((directory, i) => take(byDirectory.get(directory) ?? [], directory === '' ? 'root' : i === 0 ? 'directory' : 'parent'));
  take(language, 'language');
  return out;
}

function byRelevance(a: ScoredKnowledgeItem, b: ScoredKnowledgeItem): number {
  return b.relevance - a.relevance || b.score - a.score || b.item.confidence - a.item.confidence || b.item.createdAt - a.item.createdAt;
}
