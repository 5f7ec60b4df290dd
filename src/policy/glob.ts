/** `*` is any run, `?` one code point, anchored; no escaping, classes or braces, so names like `fs.read(v2)+` need none. */

// Bounded only against callers that build patterns from data.
const CACHE_LIMIT = 1_000;
const cache = new Map<string, RegExp>();

/**
 * A naive `.*` per star backtracks exponentially; instead each segment between stars matches at its first occurrence
 * inside a lookahead, consumed by a backreference (always safe for globs). The RegExp is cached: do not mutate it.
 */
export function globToRegExp(pattern: string): RegExp {
  const cached = cache.get(pattern);
  if (cached !== undefined) return cached;
  const segments = pattern.split(/\*+/u).map(segmentSource);
  let source: string;
  if (segments.length === 1) {
    source = segments[0] ?? '';
  } else {
    const first = segments[0] ?? '';
    const last = segments[segments.length - 1] ?? '';
    const middle = segments.slice(1, -1).map((segment, index) => `(?=(.*?${segment}))\\${index + 1}`);
    source = `${first}${middle.join('')}.*${last}`;
  }
  const compiled = new RegExp(`^${source}$`, 'su');
  if (cache.size >= CACHE_LIMIT) {
    const oldest = cache.keys().next();
    if (oldest.done !== true) cache.delete(oldest.value);
  }
  cache.set(pattern, compiled);
  return compiled;
}

export function matchesGlob(name: string, pattern: string): boolean {
  return globToRegExp(pattern).test(name);
}

export function findMatchingGlob(name: string, patterns: readonly string[]): string | undefined {
  for (const pattern of patterns) if (globToRegExp(pattern).test(name)) return pattern;
  return undefined;
}

// A run of literal characters and `?`s as regex source (the 'u' flag makes `.` one code point).
function segmentSource(segment: string): string {
  return segment.replace(/[\\^$.*+?()[\]{}|/]/gu, (char) => (char === '?' ? '.' : `\\${char}`));
}
