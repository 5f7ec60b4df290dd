/**
 * What counts as a secret, and how a string is scrubbed of one. Kept apart from the deep walk
 * in `sanitize.ts` so the rules can be read (and extended) in one place.
 *
 * Two kinds of rule: value patterns (a string that *looks like* a credential wherever it is)
 * and key names (whatever sits under `apiKey`, `Authorization`, `password`… is a credential,
 * whatever it looks like). Key names also apply inside text: `"password":"…"` in a JSON string
 * (tool arguments travel as JSON text) and `token=…` in a query string.
 */

/** What every redacted value is replaced with. */
export const REDACTED = '[REDACTED]';

/**
 * Value patterns applied by default; user patterns are added to these, never replace them.
 * The first one is the shape of OpenAI-style keys (`sk-…`, `sk-proj-…`, `sk-ant-…`).
 *
 * @example
 * ```ts
 * DEFAULT_SECRET_PATTERNS.some((p) => new RegExp(p.source).test('key sk-abcdef0123456789')); // true
 * ```
 */
export const DEFAULT_SECRET_PATTERNS: readonly RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{8,}/g,
  // Only the credential after the scheme is replaced (the `keep` group stays), so the text
  // still says what it was. A group, not a lookbehind: lookbehinds run at every position.
  /\b(?<keep>Bearer\s+)[A-Za-z0-9._~+/=-]+/gi,
  /\b(?<keep>Basic\s+)[A-Za-z0-9+/]{8,}={0,2}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g, // Slack tokens
  /\bAKIA[0-9A-Z]{16}\b/g, // AWS access key ids
  /\bAIza[0-9A-Za-z_-]{35}/g, // Google API keys
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+/g, // JWTs
];

/**
 * Key names whose values are always redacted. Matched case-insensitively, ignoring `-`, `_`
 * and other separators, and also as a suffix: `x-api-key`, `OPENAI_API_KEY`, `accessToken`
 * and `client_secret` all match. `sessionId` is deliberately absent: XState needs it.
 *
 * @example
 * ```ts
 * DEFAULT_SECRET_KEYS.includes('apiKey'); // true
 * ```
 */
export const DEFAULT_SECRET_KEYS: readonly string[] = [
  'apiKey',
  'authorization',
  'password',
  'passwd',
  'passphrase',
  'token',
  'secret',
  'cookie',
  'privateKey',
  'secretAccessKey',
  'credential',
  'credentials',
];

/** A compiled rule set: build once with {@link compileSecretRules}, apply to many strings. */
export interface SecretRules {
  /** True when a value stored under `key` must be redacted. */
  isSecretKey(key: string): boolean;
  /** `text` with every secret-looking part replaced. */
  redactText(text: string): string;
}

export interface SecretRuleOptions {
  /** Extra value patterns (a missing `g` flag is added). Text in a named group `keep` stays. */
  readonly patterns?: readonly RegExp[];
  /** Extra key names. */
  readonly keys?: readonly string[];
  /** Literal secret values to scrub wherever they occur (e.g. the configured API key). Values under 4 characters are ignored. */
  readonly secrets?: readonly string[];
  /** Default {@link REDACTED}. */
  readonly replacement?: string;
}

const normalizeKey = (key: string): string => key.toLowerCase().replace(/[^a-z0-9]/g, '');

// `"key": "value"` in JSON text; the value may be cut off by truncation (no closing quote).
const JSON_PAIR = /"((?:[^"\\]|\\.){1,128})"(\s*:\s*)"(?:[^"\\]|\\.)*("?)/g;
// `key=value` in a query string, form body or env-file line.
// A key starts only at a word's first character: otherwise a long word with no `=` would be
// rescanned from each of its characters.
const KEY_EQUALS = /(^|[^A-Za-z0-9_.-])([A-Za-z0-9_.-]{1,64})=[^\s&"'<>]+/g;

/**
 * Compile the default rules plus `options` into a reusable rule set.
 *
 * @example
 * ```ts
 * const rules = compileSecretRules({ keys: ['pin'] });
 * rules.isSecretKey('PIN');                              // true
 * rules.redactText('curl -H "Authorization: Bearer abc.def"'); // 'curl -H "Authorization: Bearer [REDACTED]"'
 * ```
 */
export function compileSecretRules(options: SecretRuleOptions = {}): SecretRules {
  const replacement = options.replacement ?? REDACTED;
  const names = [...DEFAULT_SECRET_KEYS, ...(options.keys ?? [])].map(normalizeKey).filter((name) => name !== '');
  const patterns = [...combineByFlags(DEFAULT_SECRET_PATTERNS), ...(options.patterns ?? [])].map((pattern) =>
    pattern.flags.includes('g') ? new RegExp(pattern.source, pattern.flags) : new RegExp(pattern.source, `${pattern.flags}g`),
  );
  // Longest first, so a secret that contains a shorter one is replaced whole.
  const literals = [...new Set(options.secrets ?? [])].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);

  // Objects repeat the same few keys endlessly (role, content, type…): remember the verdicts.
  const verdicts = new Map<string, boolean>();
  const isSecretKey = (key: string): boolean => {
    let verdict = verdicts.get(key);
    if (verdict === undefined) {
      const normalized = normalizeKey(key);
      verdict = normalized !== '' && names.some((name) => normalized === name || normalized.endsWith(name));
      if (verdicts.size < 10_000) verdicts.set(key, verdict);
    }
    return verdict;
  };

  // A function, not a replacement string: a replacement like '$&' must not re-insert the match.
  const keepGroup = (...args: unknown[]): string => {
    const groups = args.at(-1);
    if (typeof groups === 'object' && groups !== null) {
      for (const [name, kept] of Object.entries(groups)) {
        if (name.startsWith('keep') && typeof kept === 'string') return `${kept}${replacement}`;
      }
    }
    return replacement;
  };

  const redactText = (text: string): string => {
    let out = text;
    for (const literal of literals) if (out.includes(literal)) out = out.split(literal).join(replacement);
    for (const pattern of patterns) out = out.replace(pattern, keepGroup);
    // Cheap guards first: most strings have neither a quote-colon nor an equals sign.
    if (out.includes('"')) {
      out = out.replace(JSON_PAIR, (match: string, key: string, separator: string, close: string) =>
        isSecretKey(key) ? `"${key}"${separator}"${replacement}${close}` : match,
      );
    }
    if (out.includes('=')) {
      out = out.replace(KEY_EQUALS, (match: string, before: string, key: string) => (isSecretKey(key) ? `${before}${key}=${replacement}` : match));
    }
    return out;
  };

  return { isSecretKey, redactText };
}

/**
 * One alternation per flag set instead of a scan per pattern: the defaults run on every string
 * of every inspection event. Only our own patterns are combined (no backreferences to break);
 * their `keep` groups are renamed `keep0`, `keep1`… since a name may appear once per pattern.
 */
function combineByFlags(patterns: readonly RegExp[]): RegExp[] {
  const byFlags = new Map<string, string[]>();
  let kept = 0;
  for (const pattern of patterns) {
    const flags = pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`;
    const source = pattern.source.replace(/\(\?<keep>/g, () => `(?<keep${kept++}>`);
    byFlags.set(flags, [...(byFlags.get(flags) ?? []), `(?:${source})`]);
  }
  return [...byFlags].map(([flags, sources]) => new RegExp(sources.join('|'), flags));
}
