/**
 * Ranked lexical retrieval over knowledge items, on MiniSearch: an inverted index over the fields
 * subject, predicate, object and language, with the tokenizer of terms.ts, prefix matching for
 * terms of 4+ characters, and BM25+ scores.
 *
 * MiniSearch's score is unbounded and only comparable within one query, so each hit also gets a
 * normalised relevance in [0, 1]:
 *
 *     relevance = (queryCoverage + itemCoverage) / 2
 *     queryCoverage = Σ idf(query terms the item matched) / Σ idf(all distinct query terms)
 *     itemCoverage  = Σ idf(item terms the query matched)  / Σ idf(all distinct item terms)
 *     idf(t) = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))   (BM25's; N items, df(t) items containing t)
 *
 * "How much of what was asked does the item answer, and how much of the item is about it", each
 * weighted so that rare terms count more than common ones. Both shares are ratios, so the value
 * means the same in a store of 5 items and of 5 000 (raw BM25 grows with the corpus), and neither
 * side can make it large alone: a short query fully answered by a long item, or a long
 * conversation that mentions all of a short item, lands near 0.5–0.7; one shared common word
 * between long texts stays near 0. Dividing by the best hit's score (min-max) was rejected:
 * the best hit would always be 1, however unrelated, and no threshold could filter it out.
 *
 * Common terms: once the store holds `commonTermMinItems` (50) items, a term found in more than
 * `commonTermShare` (25 %) of them is the store's own stop word ("code" in a store of coding
 * conventions). When a query has rarer terms too, common ones are left out of the lookup and of
 * both sums: they would match nearly every item, add almost nothing (their idf is low) and cost
 * most of the time. A query made only of common terms is run as it is.
 *
 * Hits are sorted by relevance, ties broken by the BM25+ score (which also weighs term
 * frequency and the field: subject and language count double, predicate half).
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

/** One hit: an item id, its BM25+ score and its normalised relevance. */
export interface IndexHit {
  readonly id: string;
  /** MiniSearch's BM25+ score: unbounded, comparable only within one query. */
  readonly score: number;
  /** 0..1, see the file comment. */
  readonly relevance: number;
}

/** Subjects and languages name what an item is about; predicates are mostly glue ("has", "uses"). */
const BOOST = { subject: 2, predicate: 0.5, object: 1, language: 2 } as const;
/** Queries arrive as terms already processed by `termsOf`, joined by spaces. */
const splitTerms = (text: string): string[] => text.split(' ').filter((t) => t !== '');
const identity = (term: string): string => term;

/** Options of `new KnowledgeIndex()`; default `DEFAULTS.knowledge`. */
export interface KnowledgeIndexOptions {
  readonly commonTermShare?: number;
  readonly commonTermMinItems?: number;
}

/**
 * The index behind a knowledge store. Items are added and discarded by id; the store keeps the
 * items themselves.
 *
 * @example
 * ```ts
 * const index = new KnowledgeIndex();
 * index.add(item);
 * index.search(termsOf('capital of France')); // [{ id, score, relevance }]
 * ```
 */
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
  /** Distinct terms of each item. */
  readonly #terms = new Map<string, readonly string[]>();
  /** Items containing each term (document frequency). */
  readonly #df = new Map<string, number>();
  /** Memos over the corpus statistics; emptied by every add or discard. */
  readonly #idf = new Map<string, number>();
  readonly #itemWeight = new Map<string, number>();
  /** The same without common terms: two maps, so a lookup per hit builds no key string. */
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

  /** Hits for `terms` (processed by `termsOf`), best first; `accept` filters by item id. */
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

  /** Σ idf over `terms`, without the common ones when asked. */
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
