import { inspect } from 'node:util';
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { describe, expect, it } from 'vitest';
import { ActorloopError } from '../../src/core/errors.ts';
import { AuthenticationError, ContextLengthError, RateLimitError, StructuredOutputError, classifyError, redactSecrets } from '../../src/inference/index.ts';
import { InferenceError, missingConfigurationError } from '../../src/inference/errors.ts';
import { isRetryable } from '../../src/inference/retry.ts';

/** What the SDK throws for an HTTP error reply. */
function httpError(status: number, error: Record<string, unknown>, headers: Record<string, string> = {}) {
  return APIError.generate(status, { error }, undefined, new Headers(headers));
}

describe('classifyError', () => {
  it.each([
    [401, { message: 'Incorrect API key', code: 'invalid_api_key' }, 'authentication'],
    [403, { message: 'Forbidden' }, 'authentication'],
    [429, { message: 'Rate limit reached on tokens per min (TPM)', code: 'rate_limit_exceeded' }, 'rate_limited'],
    [500, { message: 'boom' }, 'server_error'],
    [502, { message: 'bad gateway' }, 'server_error'],
    [503, { message: 'overloaded' }, 'server_error'],
    [400, { message: 'too long', code: 'context_length_exceeded' }, 'context_length_exceeded'],
    [400, { message: "This model's maximum context length is 4096 tokens." }, 'context_length_exceeded'],
    [400, { message: 'Invalid value for temperature' }, 'bad_request'],
    [404, { message: 'model not found' }, 'bad_request'],
    [422, { message: 'unprocessable' }, 'bad_request'],
    [408, { message: 'request timeout' }, 'provider_timeout'],
  ] as const)('maps HTTP %i %j to %o', (status, body, expectedCode) => {
    const error = classifyError(httpError(status, body));
    expect(error).toMatchObject({ code: expectedCode });
    expect((error as { status?: number }).status).toBe(status);
  });

  it('reads Retry-After into RateLimitError and InferenceError (server_error)', () => {
    expect(classifyError(httpError(429, { message: 'slow' }, { 'retry-after-ms': '1500' }))).toMatchObject({ retryAfterMs: 1_500, retryable: true });
    expect(classifyError(httpError(503, { message: 'busy' }, { 'retry-after': '3' }))).toMatchObject({ retryAfterMs: 3_000 });
  });

  it('marks an exhausted quota as a non-retryable rate limit', () => {
    const error = classifyError(httpError(429, { message: 'You exceeded your current quota', code: 'insufficient_quota' }));
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ retryable: false });
  });

  it('classifies errors that arrive inside a stream (no HTTP status)', () => {
    expect(classifyError(new APIError(undefined, { code: 502, message: 'upstream' }, undefined, undefined))).toMatchObject({
      code: 'server_error',
      status: 502,
    });
    expect(classifyError(new APIError(undefined, { code: 'context_length_exceeded', message: 'x' }, undefined, undefined))).toBeInstanceOf(
      ContextLengthError,
    );
    expect(classifyError(new APIError(undefined, { message: 'model crashed' }, undefined, undefined))).toMatchObject({
      code: 'server_error',
      status: undefined,
      retryable: true,
    });
  });

  it('maps connection failures, timeouts, aborts and garbled bodies', () => {
    const reset = new TypeError('fetch failed', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });
    expect(classifyError(new APIConnectionError({ cause: reset }))).toMatchObject({ code: 'network' });
    expect(classifyError(new APIConnectionError({ cause: reset })).message).toContain('other side closed');
    expect(classifyError(reset)).toMatchObject({ code: 'network' });
    expect(classifyError(Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }))).toMatchObject({ code: 'network' });
    expect(classifyError(new APIConnectionTimeoutError())).toMatchObject({ code: 'provider_timeout' });
    expect(classifyError(new DOMException('slow', 'TimeoutError'))).toMatchObject({ code: 'provider_timeout' });
    expect(classifyError(new APIUserAbortError())).toMatchObject({ code: 'model_call_cancelled' });
    expect(classifyError(new DOMException('stop', 'AbortError'))).toMatchObject({ code: 'model_call_cancelled', retryable: false });
    expect(classifyError(new SyntaxError('Unexpected end of JSON input'))).toMatchObject({ code: 'invalid_response' });
    expect(classifyError(new RangeError('bug'))).toMatchObject({ code: 'provider_unknown' });
    expect(classifyError(null)).toMatchObject({ code: 'provider_unknown' });
  });

  it('passes actorloop errors through unchanged', () => {
    const error = new ContextLengthError('x');
    expect(classifyError(error)).toBe(error);
  });

  it('redacts secrets from messages and causes', () => {
    const secret = 'sk-secret-0123456789abcdef';
    const error = classifyError(httpError(401, { message: `Incorrect API key provided: ${secret}` }), { secrets: [secret] });
    expect(error.message).toContain('[redacted]');
    expect(inspect(error, { depth: 10, showHidden: true })).not.toContain(secret);
    expect(JSON.stringify(error)).not.toContain(secret);
    // Without a secret in it, the original SDK error stays the cause.
    const plain = httpError(500, { message: 'boom' });
    expect(classifyError(plain, { secrets: [secret] }).cause).toBe(plain);
  });

  it('redacts secrets of 8+ characters and ignores shorter ones (they would mangle ordinary words)', () => {
    expect(redactSecrets('key not-need', ['not-need'])).toBe('key [redacted]');
    expect(redactSecrets('key abc', ['abc'])).toBe('key abc');
  });

  it('keeps whole HTML error pages out of messages', () => {
    const page = `<html>${'x'.repeat(5_000)}</html>`;
    const error = classifyError(APIError.generate(502, undefined, page, new Headers()));
    expect(error).toMatchObject({ code: 'server_error' });
    expect(error.message.length).toBeLessThan(600);
  });
});

describe('inference errors', () => {
  const cases = [
    [new AuthenticationError('x'), 'authentication', 'user', false],
    [new RateLimitError('x'), 'rate_limited', 'provider', true],
    [InferenceError.server('x', { status: 500 }), 'server_error', 'provider', true],
    [new ContextLengthError('x'), 'context_length_exceeded', 'user', false],
    [InferenceError.badRequest('x', { status: 400 }), 'bad_request', 'user', false],
    [InferenceError.timeout(10), 'provider_timeout', 'provider', true],
    [InferenceError.network('x'), 'network', 'provider', true],
    [InferenceError.invalidResponse('x'), 'invalid_response', 'provider', true],
    [new StructuredOutputError('out', [], null), 'structured_output', 'model', false],
    [InferenceError.streamInterrupted('x', { deltasYielded: true }), 'stream_interrupted', 'provider', false],
    [InferenceError.unknown('x'), 'provider_unknown', 'provider', false],
    [InferenceError.cancelled(), 'model_call_cancelled', 'user', false],
  ] as const;

  it.each(cases)('%o has its code, blame, retryable flag, name and JSON form', (error, code, blame, retryable) => {
    expect(error).toBeInstanceOf(ActorloopError);
    expect(error).toMatchObject({ code, blame, retryable, name: error.constructor.name });
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({ name: error.constructor.name, code, blame, retryable });
  });

  it("ConfigurationError (missing_configuration) is the user's to fix and names the variables to set", () => {
    const error = missingConfigurationError();
    expect(error).toBeInstanceOf(ActorloopError);
    expect(error).toMatchObject({ code: 'missing_configuration', blame: 'user' });
    expect(isRetryable(error)).toBe(false);
    for (const name of ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENROUTER_API_KEY']) expect(error.message).toContain(name);
  });

  it('StructuredOutputError names the first issue and its path', () => {
    const error = new StructuredOutputError(
      'weather',
      [{ code: 'invalid_type', expected: 'number', path: ['celsius'], message: 'Invalid input: expected number', input: 'warm' }],
      '{"celsius":"warm"}',
    );
    expect(error.message).toContain('"weather" at celsius: Invalid input: expected number');
  });
});
