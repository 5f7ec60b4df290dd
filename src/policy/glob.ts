/**
 * Name globs for policy rules and the tool profile: `*` matches any run of characters (empty
 * included), `?` exactly one character (one Unicode code point), everything else only itself.
 * Matches are anchored: the pattern must cover the whole name. There is no escaping, no
 * character class and no brace expansion, so tool names such as `fs.read(v2)+` need none.
 */

// Compiled patterns, shared. Patterns come from configuration, so few distinct ones exist; the
// bound only keeps a caller that builds patterns from data from growing the cache forever.
const CACHE_LIMIT = 1_000;
const cache = new Map<string, RegExp>();

/**
 * The anchored RegExp equivalent to a glob. Cached: the same pattern returns the same RegExp
 * (it has no `g`/`y` flag, so it keeps no state between `test` calls — do not mutate it).
 *
 * Matching time is linear-ish in the name for any pattern: a naive translation (`.*` per star)
 * backtracks exponentially in the number of stars (`a*a*a*a*a*a*a*a*a*a*b` against 64 `a`s
 * runs for minutes). Instead every segment between two stars is matched at its first
 * occurrence inside a lookahead, which JavaScript never re-enters, and consumed through a
 * backreference. Taking the first occurrence is always safe for globs: a later one would only
 * leave less of the name for the segments after it.
 *
 * @example
 * ```ts
 * globToRegExp('fs.*').test('fs.read');  // true
 * globToRegExp('fs.*').test('fsxread');  // false — '.' is literal
 * globToRegExp('tool_?').test('tool_1'); // true
 * ```
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

/**
 * Whether `name` matches the glob `pattern` as a whole.
 *
 * @example
 * ```ts
 * matchesGlob('read_file', 'read_*'); // true
 * matchesGlob('read_file', 'read');   // false — anchored
 * matchesGlob('a+b', 'a+b');          // true — '+' is literal
 * ```
 */
export function matchesGlob(name: string, pattern: string): boolean {
  return globToRegExp(pattern).test(name);
}

/**
 * Whether `name` matches any of `patterns`; returns the first matching pattern, or undefined.
 *
 * @example
 * ```ts
 * findMatchingGlob('fs.write', ['net.*', 'fs.*']); // 'fs.*'
 * ```
 */
export function findMatchingGlob(name: string, patterns: readonly string[]): string | undefined {
  for (const pattern of patterns) if (globToRegExp(pattern).test(name)) return pattern;
  return undefined;
}

// A run of literal characters and `?`s as regex source (the 'u' flag makes `.` one code point).
function segmentSource(segment: string): string {
  return segment.replace(/[\\^$.*+?()[\]{}|/]/gu, (char) => (char === '?' ? '.' : `\\${char}`));
}
