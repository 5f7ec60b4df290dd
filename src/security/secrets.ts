/**
 * Value patterns catch what looks like a credential anywhere; key names catch whatever sits under `apiKey`,
 * `password`…, also inside JSON text (tool arguments) and query strings.
 */

export const REDACTED = '[REDACTED]';

/** User patterns are added to these, never replace them. */
export const DEFAULT_SECRET_PATTERNS: readonly RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{8,}/g,
  // Only the credential after the scheme is replaced (the `keep` group stays), so the text still says what it was.
  /\b(?<keep>Bearer\s+)[A-Za-z0-9._~+/=-]+/gi,
  /\b(?<keep>Basic\s+)[A-Za-z0-9+/]{8,}={0,2}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g, // Slack tokens
  /\bAKIA[0-9A-Z]{16}\b/g, // AWS access key ids
  /\bAIza[0-9A-Za-z_-]{35}/g, // Google API keys
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+/g, // JWTs
];

/** Matched case-insensitively, ignoring separators, and as a suffix (`x-api-key`, `accessToken`). `sessionId` is deliberately absent: XState needs it. */
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

export interface SecretRules {
  isSecretKey(key: string): boolean;
  redactText(text: string): string;
}

export interface SecretRuleOptions {
  /** Extra value patterns (a missing `g` flag is added). Text in a named group `keep` stays. */
  readonly patterns?: readonly RegExp[];
  readonly keys?: readonly string[];
  /** Literal secret values to scrub wherever they occur (e.g. the configured API key). Values under 4 characters are ignored. */
  readonly secrets?: readonly string[];
  readonly replacement?: string;
}

const normalizeKey = (key: string): string => key.toLowerCase().replace(/[^a-z0-9]/g, '');

// `"key": "value"` in JSON text; the value may be cut off by truncation (no closing quote).
const JSON_PAIR = /"((?:[^"\\]|\\.){1,128})"(\s*:\s*)"(?:[^"\\]|\\.)*("?)/g;
// `key=value` in a query string or env line; a key starts only at a word's first character, so a long word is not rescanned from each one.
const KEY_EQUALS = /(^|[^A-Za-z0-9_.-])([A-Za-z0-9_.-]{1,64})=[^\s&"'<>]+/g;

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

/** Only our own patterns are combined (no backreferences to break); `keep` groups are renamed `keep0`, `keep1`… since a name may appear once per pattern. */
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
