/**
 * Levels, most specific first: the directory, each parent, the root (`directory: ''`), then language
 * conventions the query names (unrelated languages never apply). Levels 1–3 apply whatever the query;
 * within a level the query orders them. Items saying the same thing are kept at their most specific level.
 */
import { DEFAULTS } from '../core/defaults.ts';
import { ConfigurationError } from '../core/errors.ts';
import { directoryChain } from './directory.ts';
import { contentKey, type KnowledgeItem } from './item.ts';
import type { KnowledgeStore, ScoredKnowledgeItem } from './store.ts';

export type ConventionLevel = 'directory' | 'parent' | 'root' | 'language';

export interface ScopedConvention extends ScoredKnowledgeItem {
  readonly level: ConventionLevel;
}

export interface ConventionQuery {
  /** Any spelling, see `normaliseDirectory`. */
  readonly directory: string;
  /** Orders conventions within a level and selects the language level. */
  readonly query: string;
  readonly limit?: number;
}

const isConvention = (item: KnowledgeItem): boolean => item.scope === 'conventions';

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
