/**
 * The same for indexing and queries: camelCase and snake_case split (`ActorloopError` finds "error"),
 * stop words dropped, plurals folded, CJK runs cut into overlapping bigrams (they have no spaces).
 */

/** They match everything and so say nothing about relevance. */
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
/** `parseHTTPRequest` → parse, HTTP, Request. */
const CAMEL = /(?<=\p{Ll}|\p{N})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u;

/** A few suffix rules: predictable, idempotent, and never mangling a word as an aggressive stemmer does. */
export function stem(word: string): string {
  if (word.length <= 3) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (/(?:ss|x|ch|sh|z)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !/(?:ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

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

/** Repeats kept: term frequency matters when indexing. */
export function termsOf(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(WORD)) wordTerms(match[0], out);
  return out;
}

/** Returns false once `into` holds `max` terms, so callers can stop reading. */
export function collectTerms(text: string, into: Set<string>, max: number): boolean {
  for (const term of termsOf(text)) {
    if (into.size >= max) return false;
    into.add(term);
  }
  return into.size < max;
}
