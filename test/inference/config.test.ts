import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { openAICompatible, resolveConfig } from '../../src/inference/index.ts';
import { reply, startOpenAIServer } from '../support/openaiServer.ts';
import type { OpenAIServer } from '../support/openaiServer.ts';
import type { ConfigurationError } from '../../src/core/errors.ts';

describe('openAICompatible configuration', () => {
  it('throws ConfigurationError (missing_configuration) at construction when there is no key and no base URL', () => {
    let error: unknown;
    try {
      openAICompatible({ env: { OPENAI_MODEL: 'gpt-4o', OPENAI_API_KEY: '  ' } });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'missing_configuration' });
    expect(error).toMatchObject({ code: 'missing_configuration', blame: 'user' });
    for (const name of ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENROUTER_API_KEY']) expect((error as Error).message).toContain(name);
    expect((error as ConfigurationError).variables).toEqual(['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENROUTER_API_KEY']);
  });

  it('defaults to OpenAI and gpt-4o-mini with only a key', () => {
    expect(resolveConfig({}, { OPENAI_API_KEY: 'sk-1' })).toMatchObject({
      name: 'openai-compatible',
      baseURL: 'https://api.openai.com/v1',
      apiKey: 'sk-1',
      model: 'gpt-4o-mini',
    });
    expect(resolveConfig({}, { OPENAI_API_KEY: 'sk-1', OPENAI_MODEL: 'gpt-4.1' }).model).toBe('gpt-4.1');
  });

  it('accepts a base URL without a key (local servers) using a placeholder key', () => {
    const config = resolveConfig({}, { OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1/', OPENAI_MODEL: 'llama3.2' });
    expect(config).toMatchObject({ baseURL: 'http://127.0.0.1:11434/v1', apiKey: 'not-needed', keyIsSecret: false, model: 'llama3.2' });
  });

  it('uses OpenRouter when only OPENROUTER_API_KEY is set', () => {
    expect(resolveConfig({}, { OPENROUTER_API_KEY: 'or-key', OPENROUTER_MODEL: 'anthropic/claude-3.5-haiku', OPENAI_ORG_ID: 'org-x' })).toEqual({
      name: 'openrouter',
      baseURL: 'https://openrouter.ai/api/v1',
      apiKey: 'or-key',
      keyIsSecret: true,
      model: 'anthropic/claude-3.5-haiku',
      organization: null,
      project: null,
    });
    expect(resolveConfig({}, { OPENROUTER_API_KEY: 'or-key' }).model).toBe('openai/gpt-4o-mini');
  });

  it('prefers explicit and OpenAI configuration over OpenRouter', () => {
    const env = { OPENROUTER_API_KEY: 'or-key', OPENAI_API_KEY: 'sk-1' };
    expect(resolveConfig({}, env)).toMatchObject({ name: 'openai-compatible', apiKey: 'sk-1' });
    expect(resolveConfig({ baseURL: 'http://localhost:8000/v1', model: 'qwen' }, { OPENROUTER_API_KEY: 'or-key' })).toMatchObject({
      baseURL: 'http://localhost:8000/v1',
      apiKey: 'not-needed',
      model: 'qwen',
    });
    // An explicit OpenRouter base URL picks up the OpenRouter key.
    expect(resolveConfig({ baseURL: 'https://openrouter.ai/api/v1' }, { OPENROUTER_API_KEY: 'or-key' })).toMatchObject({
      name: 'openrouter',
      apiKey: 'or-key',
    });
  });

  it('exposes name, default model and capability flags', () => {
    const provider = openAICompatible({ env: { OPENROUTER_API_KEY: 'or-key' } });
    expect(provider).toMatchObject({ name: 'openrouter', defaultModel: 'openai/gpt-4o-mini', supportsNativeTools: true, supportsStructuredOutput: true });
    expect(openAICompatible({ baseURL: 'http://127.0.0.1:1/v1', env: {}, name: 'local' }).name).toBe('local');
  });

  describe('against a server', () => {
    let server: OpenAIServer;
    beforeAll(async () => {
      server = await startOpenAIServer();
    });
    afterAll(() => server.close());
    afterEach(() => {
      vi.unstubAllEnvs();
      server.reset();
    });

    it('reads process.env by default and sends the placeholder key to a keyless base URL', async () => {
      vi.stubEnv('OPENAI_API_KEY', '');
      vi.stubEnv('OPENROUTER_API_KEY', '');
      vi.stubEnv('OPENAI_ADMIN_KEY', 'admin-secret-should-not-travel');
      vi.stubEnv('OPENAI_BASE_URL', server.baseURL);
      vi.stubEnv('OPENAI_MODEL', 'llama3.2');
      server.enqueue(reply.completion({ textPieces: ['ok'] }));
      const completion = await openAICompatible().complete({ messages: [{ role: 'user', content: 'hi' }] });
      expect(completion.text).toBe('ok');
      const request = server.requests[0];
      expect(request?.headers.authorization).toBe('Bearer not-needed');
      expect(JSON.stringify(request?.headers)).not.toContain('admin-secret');
      expect(request?.body).toMatchObject({ model: 'llama3.2' });
    });
  });
});
