/**
 * How text becomes search terms, identically for indexing and for queries: split into words
 * (camelCase and snake_case split too, so `ActorloopError` finds "error"), lowercased, English
 * stop words dropped, plurals folded (`moons` finds "moon"), and runs of CJK characters cut into
 * overlapping bigrams (they have no spaces between words; bigrams are the usual fallback).
 */

/**
 * Common English function words: they match everything and so say nothing about relevance.
 *
 * @example
 * ```ts
 * STOP_WORDS.has('the'); // true
 * ```
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both ' +
    'but by can could did do does doing don down during each else few for from further get got had has have having he her ' +
    'here hers herself him himself his how i if in into is it its itself just let me more most my myself no nor not now of ' +
    'off on once only or other our ours ourselves out over own please same she should so some such than that the their ' +
    'theirs them themselves then there these they this those through to too under until up us very was we were what when ' +
    'where which while who whom why will with would you your yours yourself yourselves'
  ).split(' '),
);

const WORD = /[\p{L}\p{N}]+/gu;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/u;
const CJK_SPLIT = /([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+)/u;
/** lower→Upper and UPPER→Upper-lower boundaries: `parseHTTPRequest` → parse, HTTP, Request. */
const CAMEL = /(?<=\p{Ll}|\p{N})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u;

/**
 * Fold English plurals to their singular with a few suffix rules (an "S-stemmer"): predictable,
 * idempotent, and it never mangles a word the way an aggressive stemmer does.
 *
 * @example
 * ```ts
 * stem('moons');   // 'moon'
 * stem('classes'); // 'class'
 * stem('cities');  // 'city'
 * stem('status');  // 'status'
 * ```
 */
export function stem(word: string): string {
  if (word.length <= 3) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (/(?:ss|x|ch|sh|z)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !/(?:ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

/** One raw word (already split on non-word characters) → its terms. */
function wordTerms(word: string, out: string[]): void {
  for (const part of word.split(CJK_SPLIT)) {
    if (part === '') continue;
    if (CJK.test(part)) {
      if (part.length === 1) out.push(part);
      for (let i = 0; i + 1 < part.length; i++) out.push(part.slice(i, i + 2));
      continue;
    }
    for (const piece of part.split(CAMEL)) {
      const lower = piece.toLowerCase();
      if (lower.length < 2 || STOP_WORDS.has(lower)) continue;
      out.push(stem(lower));
    }
  }
}

/**
 * Every term of `text`, in order, repeats kept (term frequency matters when indexing).
 *
 * @example
 * ```ts
 * termsOf('The ActorloopError has many moons'); // ['actorloop', 'error', 'many', 'moon']
 * ```
 */
export function termsOf(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(WORD)) wordTerms(match[0], out);
  return out;
}

/**
 * Add the distinct terms of `text` to `into`, in order of first appearance, until it holds
 * `max` terms. Returns false once full (so callers can stop reading further text).
 *
 * @example
 * ```ts
 * const terms = new Set<string>();
 * collectTerms('capital of France, capital city', terms, 32); // true; terms: capital, france, city
 * ```
 */
export function collectTerms(text: string, into: Set<string>, max: number): boolean {
  for (const term of termsOf(text)) {
    if (into.size >= max) return false;
    into.add(term);
  }
  return into.size < max;
}
