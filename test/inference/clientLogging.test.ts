/**
 * The `openai` client's own request logging stays off whatever OPENAI_LOG says: at `debug` it would
 * print each request to the console, its headers included: the client redacts the ones it knows
 * (Authorization), not a gateway's own credential header.
 * Over HTTP to a local server on 127.0.0.1 with the real client.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openAICompatible } from '../../src/inference/openaiCompatible.ts';
import { reply, useOpenAIServer } from '../support/openaiServer.ts';

const openai = useOpenAIServer();
const KEY = 'sk-test-0123456789abcdefSECRET';
// A gateway's credential header the client's own log redaction does not know.
const GATEWAY = 'gw-token-9876543210SECRET';
const METHODS = ['log', 'debug', 'info', 'warn', 'error'] as const;

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('the openai client with OPENAI_LOG=debug in the environment', () => {
  it('prints nothing, so neither the API key nor a gateway credential header reaches the console', async () => {
    vi.stubEnv('OPENAI_LOG', 'debug');
    const printed: unknown[][] = [];
    for (const method of METHODS) vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void printed.push(args));
    openai().enqueue(reply.completion({ textPieces: ['Hello there.'] }));
    const provider = openAICompatible({ baseURL: openai().baseURL, apiKey: KEY, headers: { 'helicone-auth': `Bearer ${GATEWAY}` }, model: 'gpt-4o-mini', env: {}, timeoutMs: 10_000, retry: { maxRetries: 0 } });
    const completion = await provider.complete({ messages: [{ role: 'user', content: 'Say hello, my PIN is 4321' }] });
    expect(completion.text).toBe('Hello there.');
    // The key did go out, to the server: the request was made with it.
    expect(openai().requests[0]?.headers['authorization']).toBe(`Bearer ${KEY}`);
    expect(JSON.stringify(printed)).not.toContain(GATEWAY);
    expect(JSON.stringify(printed)).not.toContain(KEY);
    expect(printed).toEqual([]);
  });
});
