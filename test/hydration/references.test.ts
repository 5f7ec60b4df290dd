import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.ts';
import { extractReferences, type Reference } from '../../src/hydration/references.ts';

const pairs = (references: readonly Reference[]) => references.map(({ kind, value }) => [kind, value]);

describe('extractReferences', () => {
  it('finds http and https URLs, without the punctuation that ends a sentence', () => {
    const task = 'Read https://example.com/spec. Then (see http://docs.example.org/a?b=1), and [link](https://x.test/p_(1)).';
    expect(pairs(extractReferences(task))).toEqual([
      ['url', 'https://example.com/spec'],
      ['url', 'http://docs.example.org/a?b=1'],
      ['url', 'https://x.test/p_(1)'],
    ]);
  });

  it('finds relative, ./, ../, ~/ and absolute file paths, and leaves prose alone', () => {
    const task = 'Edit src/app.ts and ./x/y.md, compare ../shared/a.json, ~/config.toml and /etc/x. Not and/or, e.g., v1.2, 24/7 or km/h.';
    expect(pairs(extractReferences(task))).toEqual([
      ['file', 'src/app.ts'],
      ['file', './x/y.md'],
      ['file', '../shared/a.json'],
      ['file', '~/config.toml'],
      ['file', '/etc/x'],
    ]);
  });

  it('finds #42 issues and PR #55 / pr 12 / pull request 7, without counting a PR as an issue', () => {
    const task = 'Fixes #42, see PR #55, pr 12 and pull request 7. Not C#8, &#35; or a heading.';
    expect(pairs(extractReferences(task))).toEqual([
      ['issue', '42'],
      ['pr', '55'],
      ['pr', '12'],
      ['pr', '7'],
    ]);
  });

  it('does not read a URL’s path as a file or its fragment as an issue', () => {
    expect(pairs(extractReferences('https://github.com/o/r/blob/main/src/app.ts#42'))).toEqual([['url', 'https://github.com/o/r/blob/main/src/app.ts#42']]);
  });

  it('finds custom patterns, taking the first capture group when there is one', () => {
    const references = extractReferences('PROJ-123 blocks ticket:9981 and PROJ-7', {
      patterns: [
        { kind: 'jira', pattern: /\b[A-Z]+-\d+\b/ },
        { kind: 'ticket', pattern: /ticket:(\d+)/g },
      ],
    });
    expect(pairs(references)).toEqual([
      ['jira', 'PROJ-123'],
      ['ticket', '9981'],
      ['jira', 'PROJ-7'],
    ]);
  });

  it('returns references in the order they appear, with their positions', () => {
    expect(extractReferences('see #1 then https://a.test/')).toEqual([
      { kind: 'issue', value: '1', index: 4 },
      { kind: 'url', value: 'https://a.test/', index: 12 },
    ]);
  });

  it('de-duplicates repeated references, keeping the first', () => {
    const task = 'https://a.test/x and https://A.TEST/x; #42 and #42; src/a.ts and ./src/a.ts; PR #5 and pull request 5';
    expect(pairs(extractReferences(task))).toEqual([
      ['url', 'https://a.test/x'],
      ['issue', '42'],
      ['file', 'src/a.ts'],
      ['pr', '5'],
    ]);
  });

  it('survives a custom pattern that matches the empty string', () => {
    expect(pairs(extractReferences('ab', { patterns: [{ kind: 'odd', pattern: /x*/ }] }))).toEqual([]);
  });

  it('rejects custom patterns without a kind or a RegExp', () => {
    expect(() => extractReferences('x', { patterns: [{ kind: '', pattern: /x/ }] })).toThrow(ConfigurationError);
    expect(() => extractReferences('x', { patterns: [{ kind: 'k', pattern: 'x' as unknown as RegExp }] })).toThrow(ConfigurationError);
  });

  it('finds nothing in a task without references', () => {
    expect(extractReferences('What is 6 * 7?')).toEqual([]);
  });
});
