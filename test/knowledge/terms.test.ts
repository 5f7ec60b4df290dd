import { describe, expect, it } from 'vitest';
import { directoryChain, normaliseDirectory } from '../../src/knowledge/directory.ts';
import { collectTerms, stem, termsOf } from '../../src/knowledge/terms.ts';

describe('termsOf', () => {
  it('drops English stop words and lowercases', () => {
    expect(termsOf('What is the Capital of FRANCE?')).toEqual(['capital', 'france']);
  });

  it('splits camelCase, PascalCase and snake_case identifiers', () => {
    expect(termsOf('ActorloopError store_knowledge parseHTTPRequest')).toEqual(['actorloop', 'error', 'store', 'knowledge', 'parse', 'http', 'request']);
  });

  it('folds plurals so a query in the plural finds the singular', () => {
    expect(termsOf('moons classes cities boxes status')).toEqual(['moon', 'class', 'city', 'box', 'status']);
  });

  it('cuts CJK runs into overlapping bigrams', () => {
    expect(termsOf('法国的首都')).toEqual(['法国', '国的', '的首', '首都']);
  });

  it('is stable: terms re-tokenize to themselves', () => {
    const terms = termsOf('The ActorloopErrors of cities, 法国首都 and boxes v2 analyses');
    expect(termsOf(terms.join(' '))).toEqual(terms);
  });
});

describe('stem', () => {
  it('leaves short words and -ss/-us/-is endings alone', () => {
    expect(['gas', 'class', 'status', 'analysis'].map(stem)).toEqual(['gas', 'class', 'status', 'analysis']);
  });
});

describe('collectTerms', () => {
  it('keeps distinct terms in order and stops at the cap', () => {
    const terms = new Set<string>();
    expect(collectTerms('alpha beta alpha gamma delta', terms, 3)).toBe(false);
    expect([...terms]).toEqual(['alpha', 'beta', 'gamma']);
  });
});

describe('directories', () => {
  it('normalises every spelling of a directory to one key', () => {
    expect(['src/api', './src/api/', 'src\\api', '/src/api', 'src//api', 'src/x/../api'].map(normaliseDirectory)).toEqual(Array(6).fill('src/api'));
    expect(['', '.', '/', './', ' '].map(normaliseDirectory)).toEqual(Array(5).fill(''));
  });

  it('lists a directory and its parents up to the root', () => {
    expect(directoryChain('./src/api/handlers/')).toEqual(['src/api/handlers', 'src/api', 'src', '']);
    expect(directoryChain('.')).toEqual(['']);
  });
});
