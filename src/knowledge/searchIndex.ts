/**
 * BM25+ scores are unbounded and comparable only within one query, so each hit also gets a relevance
 * in [0, 1] that means the same in any store: (queryCoverage + itemCoverage) / 2, each the idf-weighted
 * share of that side's distinct terms the other matched. Terms in more than `commonTermShare` of a large
 * store are left out when a query has rarer ones: they match nearly everything and add almost nothing.
 */
import MiniSearch from 'minisearch';
import { DEFAULTS } from '../core/defaults.ts';
import type { KnowledgeItem } from './item.ts';
import { termsOf } from './terms.ts';

interface IndexedDoc {
  readonly id: string;
  readonly subject: string;
  readonly predicate: string;
  readonly object: string;
  readonly language: string;
}

export interface IndexHit {
  readonly id: string;
  /** BM25+: unbounded, comparable only within one query. */
  readonly score: number;
  /** 0..1, see the file comment. */
  readonly relevance: number;
}

/** Predicates are mostly glue ("has", "uses"). */
const BOOST = { subject: 2, predicate: 0.5, object: 1, language: 2 } as const;
/** Queries arrive as terms already processed by `termsOf`, joined by spaces. */
const splitTerms = (text: string): string[] => text.split(' ').filter((t) => t !== '');
const identity = (term: string): string => term;

export interface KnowledgeIndexOptions {
  readonly commonTermShare?: number;
  readonly commonTermMinItems?: number;
}

/** The store keeps the items themselves. */
export class KnowledgeIndex {
  readonly #mini = new MiniSearch<IndexedDoc>({
    fields: ['subject', 'predicate', 'object', 'language'],
    tokenize: (text) => termsOf(text),
    processTerm: identity,
    searchOptions: {
      boost: BOOST,
      prefix: (term) => term.length >= 4,
      combineWith: 'OR',
      tokenize: splitTerms,
      processTerm: identity,
    },
  });
  readonly #commonShare: number;
  readonly #commonMinItems: number;
  readonly #terms = new Map<string, readonly string[]>();
  /** Document frequency. */
  readonly #df = new Map<string, number>();
  /** Emptied by every add or discard. */
  readonly #idf = new Map<string, number>();
  readonly #itemWeight = new Map<string, number>();
  /** The same without common terms. */
  readonly #itemWeightRare = new Map<string, number>();

  constructor(options: KnowledgeIndexOptions = {}) {
    this.#commonShare = options.commonTermShare ?? DEFAULTS.knowledge.commonTermShare;
    this.#commonMinItems = options.commonTermMinItems ?? DEFAULTS.knowledge.commonTermMinItems;
  }

  get size(): number {
    return this.#terms.size;
  }

  add(item: KnowledgeItem): void {
    this.discard(item.id);
    const doc: IndexedDoc = {
      id: item.id,
      subject: item.subject,
      predicate: item.predicate,
      object: item.object,
      language: item.language ?? '',
    };
    this.#mini.add(doc);
    const terms = [...new Set(termsOf(`${doc.subject} ${doc.predicate} ${doc.object} ${doc.language}`))];
    this.#terms.set(item.id, terms);
    for (const term of terms) this.#df.set(term, (this.#df.get(term) ?? 0) + 1);
    this.#changed();
  }

  discard(id: string): void {
    const terms = this.#terms.get(id);
    if (terms === undefined) return;
    this.#mini.discard(id);
    this.#terms.delete(id);
    for (const term of terms) {
      const left = (this.#df.get(term) ?? 1) - 1;
      if (left > 0) this.#df.set(term, left);
      else this.#df.delete(term);
    }
    this.#changed();
  }

  /** `terms` processed by `termsOf`; `accept` filters by item id. */
  search(terms: readonly string[], accept?: (id: string) => boolean): IndexHit[] {
    const distinct = [...new Set(terms)].filter((t) => t !== '' && !t.includes(' '));
    const rare = distinct.filter((t) => !this.#isCommon(t));
    // Leave common terms out only when something rarer is left to search for.
    const skipCommon = rare.length > 0 && rare.length < distinct.length;
    const queryTerms = skipCommon ? rare : distinct;
    if (queryTerms.length === 0 || this.size === 0) return [];
    const queryWeight = this.#weight(queryTerms, false);
    const raw = this.#mini.search(queryTerms.join(' '), accept === undefined ? {} : { filter: (result) => accept(String(result.id)) });
    const hits: IndexHit[] = [];
    for (const result of raw) {
      const id = String(result.id);
      const itemWeight = this.#weightOfItem(id, skipCommon);
      if (itemWeight === undefined) continue;
      const queryCoverage = this.#weight(result.queryTerms, false) / queryWeight;
      const itemCoverage = this.#weight(result.terms, skipCommon) / itemWeight;
      const relevance = Math.min(1, Math.max(0, (queryCoverage + itemCoverage) / 2));
      hits.push({ id, score: result.score, relevance: Number.isFinite(relevance) ? relevance : 0 });
    }
    return hits.sort((a, b) => b.relevance - a.relevance || b.score - a.score);
  }

  #changed(): void {
    this.#idf.clear();
    this.#itemWeight.clear();
    this.#itemWeightRare.clear();
  }

  #isCommon(term: string): boolean {
    const n = this.size;
    return n >= this.#commonMinItems && (this.#df.get(term) ?? 0) > this.#commonShare * n;
  }

  #weightOfItem(id: string, skipCommon: boolean): number | undefined {
    const memo = skipCommon ? this.#itemWeightRare : this.#itemWeight;
    let weight = memo.get(id);
    if (weight === undefined) {
      const terms = this.#terms.get(id);
      if (terms === undefined) return undefined;
      weight = this.#weight(terms, skipCommon);
      memo.set(id, weight);
    }
    return weight;
  }

  #weight(terms: readonly string[], skipCommon: boolean): number {
    let sum = 0;
    for (const term of terms) {
      if (skipCommon && this.#isCommon(term)) continue;
      sum += this.#idfOf(term);
    }
    return sum;
  }

  #idfOf(term: string): number {
    let idf = this.#idf.get(term);
    if (idf === undefined) {
      const n = this.size;
      const df = this.#df.get(term) ?? 0;
      idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      this.#idf.set(term, idf);
    }
    return idf;
  }
}
