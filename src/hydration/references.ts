/** Extraction only finds; resolvers decide what may be read (`file_read` is confined to its root, `web_fetch` refuses internal addresses). */
import path from 'node:path';
import { ConfigurationError } from '../core/errors.ts';

export interface Reference {
  readonly kind: string;
  /** The reference as written (issue and PR numbers without `#`). */
  readonly value: string;
  /** Where it starts in the task; references are returned in this order. */
  readonly index: number;
}

/** The value is the first capture group when there is one, else the whole match. */
export interface ReferencePattern {
  readonly kind: string;
  readonly pattern: RegExp;
}

export interface ExtractOptions {
  readonly patterns?: readonly ReferencePattern[];
}

const KIND = /^[a-zA-Z][\w-]{0,31}$/;
// Longest value kept from a custom match: a runaway pattern must not copy the whole task.
const MAX_VALUE_CHARS = 2048;

const URL_PATTERN = /\bhttps?:\/\/[^\s<>"'`\\^{}|]+/gi;
const PR_PATTERN = /\b(?:pull\s+request|PR)\s*#?\s*(\d{1,9})\b/gi;
const ISSUE_PATTERN = /(?<![\w&#/])#(\d{1,9})\b/g;
const PATH_PATTERN = /(?<![\w.~/@:-])(?:~\/|\.{1,2}\/|\/)?(?:[\w@+-][\w.@+-]*\/)*[\w@+-][\w.@+-]*\/?/g;
const EXTENSION = /\.[A-Za-z][A-Za-z0-9]{0,9}$/;

/** Sentence punctuation after a URL is not part of it; a `)` is, when it closes a `(` inside. */
function trimUrl(raw: string): string {
  let url = raw;
  for (;;) {
    const last = url.at(-1);
    if (last === undefined) return url;
    if (last === ')' || last === ']') {
      const open = last === ')' ? '(' : '[';
      if (url.split(open).length >= url.split(last).length) return url;
    } else if (!'.,;:!?\'"*_~>'.includes(last)) return url;
    url = url.slice(0, -1);
  }
}

/** Paths need a shape that prose rarely has: a `./`, `../`, `~/` or `/` start, or a folder and an extension. */
function isFilePath(token: string): boolean {
  if (/^(?:\.{1,2}|~)\/./.test(token)) return true;
  const segments = token.split('/').filter((segment) => segment !== '');
  if (token.startsWith('/')) return segments.length >= 2 || EXTENSION.test(token);
  return segments.length >= 2 && EXTENSION.test(segments.at(-1) ?? '');
}

function blank(text: string, start: number, length: number): string {
  return text.slice(0, start) + ' '.repeat(length) + text.slice(start + length);
}

function checkPatterns(patterns: readonly ReferencePattern[]): void {
  for (const entry of patterns) {
    if (typeof entry !== 'object' || entry === null || typeof entry.kind !== 'string' || !KIND.test(entry.kind)) {
      throw new ConfigurationError('Each custom reference pattern needs a `kind` like "jira" (a letter, then up to 31 letters, digits, "_" or "-").');
    }
    if (!(entry.pattern instanceof RegExp)) {
      throw new ConfigurationError(`Custom reference pattern "${entry.kind}" needs a RegExp \`pattern\`, e.g. /\\b[A-Z]+-\\d+\\b/.`);
    }
  }
}

function* matches(pattern: RegExp, text: string): Generator<RegExpExecArray> {
  const flags = pattern.flags.replace('y', '');
  const global = new RegExp(pattern.source, flags.includes('g') ? flags : `${flags}g`);
  for (let match = global.exec(text); match !== null; match = global.exec(text)) {
    // A pattern that can match the empty string would otherwise loop forever.
    if (match[0] === '') global.lastIndex += 1;
    else yield match;
  }
}

function dedupeKey(reference: Reference): string {
  let value = reference.value;
  if (reference.kind === 'url') {
    try {
      value = new URL(value).href;
    } catch {
      // Keep the text as written; it will fail to resolve on its own.
    }
  } else if (reference.kind === 'file') value = path.posix.normalize(value);
  return `${reference.kind}\u0000${value}`;
}

/**
 * Distinct references in order of first appearance. URLs are found first and hidden from the other built-ins, so a
 * URL's path is not also a file nor its `#42` fragment an issue; custom patterns see the whole task.
 */
export function extractReferences(task: string, options: ExtractOptions = {}): Reference[] {
  const patterns = options.patterns ?? [];
  checkPatterns(patterns);
  const found: Reference[] = [];
  let rest = task;
  for (const match of matches(URL_PATTERN, task)) {
    const value = trimUrl(match[0]);
    found.push({ kind: 'url', value, index: match.index });
    rest = blank(rest, match.index, value.length);
  }
  for (const match of matches(PR_PATTERN, rest)) {
    found.push({ kind: 'pr', value: match[1]!, index: match.index });
    rest = blank(rest, match.index, match[0].length);
  }
  for (const match of matches(ISSUE_PATTERN, rest)) found.push({ kind: 'issue', value: match[1]!, index: match.index });
  for (const match of matches(PATH_PATTERN, rest)) {
    const value = match[0].replace(/\.+$/, '');
    if (isFilePath(value)) found.push({ kind: 'file', value, index: match.index });
  }
  for (const { kind, pattern } of patterns) {
    for (const match of matches(pattern, task)) {
      const value = (match[1] ?? match[0]).slice(0, MAX_VALUE_CHARS);
      if (value !== '') found.push({ kind, value, index: match.index });
    }
  }
  found.sort((a, b) => a.index - b.index);
  const seen = new Set<string>();
  return found.filter((reference) => {
    const key = dedupeKey(reference);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
