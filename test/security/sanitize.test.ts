import { describe, expect, it } from 'vitest';
import { ConfigurationError, ModelBehaviorError } from '../../src/core/errors.ts';
import { compileSecretRules, createSanitizer, REDACTED, sanitize } from '../../src/inspect/index.ts';

const KEY = 'sk-proj-0123456789abcdefXYZ';

describe('sanitize', () => {
  describe('secret values', () => {
    it('redacts sk- keys anywhere in a string, keeping the text around them', () => {
      expect(sanitize(`use ${KEY} now`)).toBe(`use ${REDACTED} now`);
      expect(sanitize({ a: [{ b: `x${' '}${KEY}` }] })).toEqual({ a: [{ b: `x ${REDACTED}` }] });
    });

    it('does not take words that merely contain "sk-" for keys', () => {
      expect(sanitize('ask-me-anything-today and task-runner-config')).toBe('ask-me-anything-today and task-runner-config');
    });

    it('redacts the credential after Bearer and Basic, case-insensitively for Bearer', () => {
      expect(sanitize('Authorization: Bearer abc.DEF-123_xyz')).toBe(`Authorization: Bearer ${REDACTED}`);
      expect(sanitize('bearer tok')).toBe(`bearer ${REDACTED}`);
      expect(sanitize('Basic dXNlcjpwYXNzd29yZA==')).toBe(`Basic ${REDACTED}`);
    });

    it('redacts other well-known token shapes (GitHub, Slack, AWS, JWT)', () => {
      const text = [
        'ghp_0123456789abcdefghijABCDEFGHIJ',
        'xoxb-1234567890-abcdef',
        'AKIAABCDEFGHIJKLMNOP',
        'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig_nature',
      ].join(' ');
      expect(sanitize(text)).toBe([REDACTED, REDACTED, REDACTED, REDACTED].join(' '));
    });

    it('redacts values of secret keys inside JSON text and query strings', () => {
      expect(sanitize('{"user":"ann","password":"hunter2","apiKey":"k"}')).toBe(`{"user":"ann","password":"${REDACTED}","apiKey":"${REDACTED}"}`);
      expect(sanitize('https://x.test/cb?code=1&access_token=abc123&state=ok')).toBe(`https://x.test/cb?code=1&access_token=${REDACTED}&state=ok`);
    });

    it('redacts a JSON secret whose closing quote was cut off', () => {
      expect(sanitize('{"token":"abcdef')).toBe(`{"token":"${REDACTED}`);
    });

    it('scrubs literal secret values given in options, and applies extra patterns', () => {
      const clean = createSanitizer({ secrets: ['hunter2-literal'], patterns: [/\bPIN-\d{4}\b/] });
      expect(clean({ note: 'pw hunter2-literal, PIN-1234 and PIN-5678' })).toEqual({ note: `pw ${REDACTED}, ${REDACTED} and ${REDACTED}` });
    });

    it('never re-inserts the match through a $& replacement', () => {
      expect(sanitize(`x ${KEY}`, { replacement: '$&' })).toBe('x $&');
    });
  });

  describe('secret keys', () => {
    it('redacts whatever sits under apiKey, authorization, password, token and secret, in any case or spelling', () => {
      const input = {
        apiKey: 'a',
        API_KEY: 'b',
        'x-api-key': 'c',
        Authorization: 'd',
        PASSWORD: { nested: 'e' },
        accessToken: 'f',
        client_secret: ['g'],
        safe: 'visible',
      };
      expect(sanitize(input)).toEqual({
        apiKey: REDACTED,
        API_KEY: REDACTED,
        'x-api-key': REDACTED,
        Authorization: REDACTED,
        PASSWORD: REDACTED,
        accessToken: REDACTED,
        client_secret: REDACTED,
        safe: 'visible',
      });
    });

    it('keeps token counts, session ids and other near-misses', () => {
      const input = { totalTokens: 5, maxTokens: 9, sessionId: 'x:0', author: 'ann', tokenizer: 'bpe' };
      expect(sanitize(input)).toEqual(input);
    });

    it('accepts extra key names and keeps the default ones', () => {
      const rules = compileSecretRules({ keys: ['pin'] });
      expect(rules.isSecretKey('PIN')).toBe(true);
      expect(rules.isSecretKey('password')).toBe(true);
      expect(rules.isSecretKey('spinner')).toBe(false);
    });
  });

  describe('limits', () => {
    it('truncates long strings with a marker saying how much was cut', () => {
      const out = sanitize('a'.repeat(10_000), { maxStringLength: 100 });
      expect(out).toBe(`${'a'.repeat(100)}…[truncated 9900 chars]`);
    });

    it('truncates at 4 KB by default', () => {
      const out = sanitize('b'.repeat(5000)) as string;
      expect(out.startsWith('b'.repeat(4096))).toBe(true);
      expect(out).toContain('[truncated 904 chars]');
    });

    it('redacts a secret that straddles the cut', () => {
      const text = `${'x'.repeat(95)} ${KEY}`;
      const out = sanitize(text, { maxStringLength: 100 }) as string;
      expect(out).not.toContain('sk-proj');
      expect(out.startsWith(`${'x'.repeat(95)} [RED`)).toBe(true);
    });

    it('never cuts a surrogate pair in half', () => {
      const out = sanitize(`${'a'.repeat(15)}😀😀`, { maxStringLength: 16 }) as string;
      expect(out.startsWith(`${'a'.repeat(15)}…`)).toBe(true);
    });

    it('cuts nesting deeper than maxDepth', () => {
      expect(sanitize({ a: { b: { c: 1 } } }, { maxDepth: 2 })).toEqual({ a: { b: '[MaxDepth]' } });
    });

    it('rejects nonsensical limits with a ConfigurationError', () => {
      expect(() => createSanitizer({ maxStringLength: 0 })).toThrow(ConfigurationError);
      expect(() => createSanitizer({ maxDepth: -1 })).toThrow(ConfigurationError);
    });
  });

  describe('shapes', () => {
    it('marks cycles and keeps shared (acyclic) references', () => {
      const shared = { v: 1 };
      const cyclic: Record<string, unknown> = { name: 'root', shared, again: shared };
      cyclic['self'] = cyclic;
      expect(sanitize(cyclic)).toEqual({ name: 'root', shared: { v: 1 }, again: { v: 1 }, self: '[Circular]' });
    });

    it('does not mutate its input', () => {
      const input = { password: 'p', list: [`k ${KEY}`], deep: { s: 'z'.repeat(5000) } };
      const copy = structuredClone(input);
      sanitize(input);
      expect(input).toEqual(copy);
    });

    it('drops __proto__ keys so the output cannot pollute a prototype when copied', () => {
      const input = JSON.parse('{"a":1,"__proto__":{"polluted":true},"nested":{"__proto__":{"polluted":true}}}') as unknown;
      const out = sanitize(input) as Record<string, unknown>;
      expect(Object.keys(out)).toEqual(['a', 'nested']);
      const target = Object.assign({}, out, out['nested']);
      expect((target as Record<string, unknown>)['polluted']).toBeUndefined();
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    });

    it('writes errors as name and message (sanitised), with enumerable fields and cause, without the stack', () => {
      const cause = new Error(`inner ${KEY}`);
      const error = Object.assign(new Error(`outer ${KEY}`, { cause }), { status: 401, headers: { authorization: 'Bearer x' } });
      expect(sanitize(error)).toEqual({
        name: 'Error',
        message: `outer ${REDACTED}`,
        status: 401,
        headers: { authorization: REDACTED },
        cause: { name: 'Error', message: `inner ${REDACTED}` },
      });
    });

    it('uses toJSON like JSON.stringify does (ActorloopError, Date)', () => {
      const error = new ModelBehaviorError(`bad ${KEY}`, { runId: 'r1' });
      expect(sanitize({ error, at: new Date(0) })).toEqual({
        error: { name: 'ModelBehaviorError', code: 'model_behavior', blame: 'model', message: `bad ${REDACTED}`, runId: 'r1' },
        at: '1970-01-01T00:00:00.000Z',
      });
    });

    it('turns non-JSON values into JSON-safe ones', () => {
      const out = sanitize({
        big: 10n,
        nan: Number.NaN,
        fn: () => 1,
        sym: Symbol('s'),
        undef: undefined,
        list: [undefined, () => 1],
        map: new Map([['k', { token: 't' }]]),
        set: new Set([1]),
        bytes: new Uint8Array(3),
        re: /a/g,
      });
      expect(out).toEqual({
        big: '10',
        nan: null,
        list: [null, null],
        map: [['k', { token: REDACTED }]],
        set: [1],
        bytes: '[Binary 3 bytes]',
        re: '/a/g',
      });
      expect(sanitize(undefined)).toBeNull();
    });

    it('survives throwing getters, throwing toJSON and hostile proxies', () => {
      const getter = Object.defineProperty({ ok: 1 }, 'bad', {
        enumerable: true,
        get() {
          throw new Error('no');
        },
      });
      const badJson = { toJSON() {
        throw new Error('no');
      } };
      const proxy = new Proxy({}, { ownKeys() {
        throw new Error('no');
      } });
      expect(sanitize({ getter, badJson, proxy })).toEqual({ getter: { ok: 1, bad: '[Unreadable]' }, badJson: '[Unreadable]', proxy: '[Unreadable]' });
    });

    it('reads an XState-like ref through its toJSON instead of walking its internals', () => {
      const ref = { id: 'child', system: { huge: 'x'.repeat(10) }, toJSON: () => ({ xstate$$type: 1, id: 'child' }) };
      expect(sanitize({ children: { child: ref } })).toEqual({ children: { child: { xstate$$type: 1, id: 'child' } } });
    });
  });
});
