import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.ts';
import { formatToolError } from '../../src/tools/formatError.ts';

describe('formatToolError', () => {
  it('renders an Error as Name: message without its stack', () => {
    const error = new TypeError('bad input');
    expect(error.stack).toContain('formatError.test.ts');
    expect(formatToolError(error)).toBe('TypeError: bad input');
  });

  it('renders actorloop errors with their code, and errors without a message', () => {
    expect(formatToolError(new ConfigurationError('fix the config'))).toBe('ConfigurationError: fix the config [code: configuration]');
    expect(formatToolError(new RangeError())).toBe('RangeError (no message)');
  });

  it('never includes the cause chain', () => {
    const error = new Error('request failed', { cause: new Error('Authorization: Bearer SECRET-CANARY') });
    expect(formatToolError(error)).toBe('Error: request failed');
  });

  it('adds a short error code the message does not mention', () => {
    const error = Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' });
    expect(formatToolError(error)).toBe('Error: connection refused [code: ECONNREFUSED]');
    const mentioned = Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT' });
    expect(formatToolError(mentioned)).toBe('Error: ENOENT: no such file');
  });

  it.each([
    ['a string', 'disk full', 'disk full'],
    ['an empty string', '', 'Tool failed with an empty error message'],
    ['null', null, 'Tool failed without an error message (threw null)'],
    ['undefined', undefined, 'Tool failed without an error message (threw undefined)'],
    ['a number', 404, 'Tool threw a non-error value: 404'],
    ['an object', { status: 500, detail: 'upstream' }, 'Tool threw a non-error value: {"status":500,"detail":"upstream"}'],
    ['an error-like object', { name: 'HttpError', message: 'Not Found' }, 'HttpError: Not Found'],
    ['a function', () => 1, 'Tool threw a function instead of an error'],
  ])('renders %s', (_label, thrown, expected) => {
    expect(formatToolError(thrown)).toBe(expected);
  });

  it('handles a rejected promise value the same way as a throw', async () => {
    const reason: unknown = await Promise.reject(new Error('async boom')).catch((error: unknown) => error);
    expect(formatToolError(reason)).toBe('Error: async boom');
  });

  it('truncates a huge message and states its length', () => {
    const started = performance.now();
    const text = formatToolError(new Error('x'.repeat(10 * 1024 * 1024)));
    expect(performance.now() - started).toBeLessThan(200);
    expect(text.length).toBeLessThanOrEqual(2000);
    expect(text.startsWith('Error: xxx')).toBe(true);
    expect(text).toMatch(/ … \[truncated, 10485767 chars\]$/);
  });

  it('respects a custom limit and never splits a surrogate pair', () => {
    const text = formatToolError(new Error('😀'.repeat(1000)), 100);
    expect(text.length).toBeLessThanOrEqual(100);
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(text)).toBe(false);
  });

  it('bounds thrown objects and strings too', () => {
    expect(formatToolError({ blob: 'y'.repeat(100_000) }).length).toBeLessThanOrEqual(2000);
    expect(formatToolError('z'.repeat(100_000)).length).toBeLessThanOrEqual(2000);
  });

  it('strips stack frames embedded in messages, ANSI colours, control characters and lone surrogates', () => {
    const message = 'query failed\n    at run (/app/db.js:10:5)\n    at async main (file:///app/index.js:3:1)\n\u001b[31mred\u001b[0m\u0007 \uD800';
    expect(formatToolError(new Error(message))).toBe('Error: query failed\nred  \uFFFD');
  });

  it('summarises an AggregateError', () => {
    const error = new AggregateError([new Error('a'), 'b', null, new Error('d')], 'all failed');
    expect(formatToolError(error)).toBe(
      'AggregateError: all failed (4 errors: Error: a; b; Tool failed without an error message (threw null); and 1 more)',
    );
  });

  it('never throws, even for hostile values', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
      },
    );
    const getter = Object.defineProperty(new Error('x'), 'message', {
      get() {
        throw new Error('trap');
      },
    });
    expect(formatToolError(hostile)).toBe('Tool failed with an error that could not be described');
    expect(formatToolError(getter)).toBe('Tool failed with an error that could not be described');
  });
});
