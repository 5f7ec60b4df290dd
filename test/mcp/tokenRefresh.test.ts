/**
 * Proactive token refresh: a token whose `expires_in` says it lapses soon is refreshed before the
 * request goes out, not after the server refuses it. `Date` is faked (timers stay real), and the
 * local authorization server lapses its tokens by the same clock, so no test waits on a wall clock.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAgent } from '../../src/agent/createAgent.ts';
import type { LoopEvent } from '../../src/core/loopEvent.ts';
import { connectMcpServer, type McpServer } from '../../src/mcp/connect.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { startOAuthFixture, type OAuthFixture } from './fixtures/oauthServer.ts';
import { toolResults } from './support.ts';

const REDIRECT = 'http://127.0.0.1:1/callback';
const LIFETIME_S = 10;
const toolContext = { signal: new AbortController().signal, toolCallId: 'c1', idempotencyKey: 'refresh:c1', runId: 'refresh', agentId: 'refresh' };

async function signIn(url: URL): Promise<string> {
  const response = await fetch(url, { redirect: 'manual' });
  return new URL(response.headers.get('location') ?? '').searchParams.get('code') ?? '';
}

async function whoami(server: McpServer): Promise<string> {
  const tool = (await server.tools()).find((candidate) => candidate.name === 'secure_whoami');
  return JSON.stringify(await tool?.execute({}, toolContext));
}

const later = (ms: number): void => void vi.setSystemTime(Date.now() + ms);

describe('proactive OAuth token refresh', () => {
  let fixture: OAuthFixture | undefined;
  let server: McpServer | undefined;
  afterEach(async () => {
    await server?.close();
    await fixture?.stop();
    server = undefined;
    fixture = undefined;
    vi.useRealTimers();
  });

  it('refreshes with the refresh token shortly before expiry, so the server never refuses the call', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    fixture = await startOAuthFixture({ expiresIn: LIFETIME_S });
    server = await connectMcpServer({ name: 'secure', url: fixture.url, auth: { redirectUrl: REDIRECT, authorize: signIn } });
    expect(await whoami(server)).toContain(`token ${fixture.issued[0]}`);
    const refusals = fixture.unauthorized;
    // Half its life in: the token is used as it is.
    later(LIFETIME_S * 500);
    expect(await whoami(server)).toContain(`token ${fixture.issued[0]}`);
    expect(fixture.grants).toEqual(['authorization_code']);
    // Nine tenths in, still valid at the server: the client refreshes it first anyway.
    later(LIFETIME_S * 400);
    expect(await whoami(server)).toContain(`token ${fixture.issued[1]}`);
    expect(fixture.grants).toEqual(['authorization_code', 'refresh_token']);
    expect(fixture.unauthorized).toBe(refusals);
  }, 30_000);

  it('gets a new client-credentials token before expiry on a live agent, and keeps it out of the journal and events', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    fixture = await startOAuthFixture({ expiresIn: LIFETIME_S, client: { id: 'robot', secret: 'robot-secret-1' } });
    const model = scriptedModel([{ toolCalls: [{ name: 'secure_whoami', arguments: {} }] }, { text: 'one' }, { toolCalls: [{ name: 'secure_whoami', arguments: {} }] }, { text: 'two' }]);
    const events: LoopEvent[] = [];
    const agent = createAgent({
      model,
      mcpServers: [{ name: 'secure', url: fixture.url, auth: { grant: 'client_credentials', clientId: 'robot', clientSecret: 'robot-secret-1' } }],
      observe: { events: (entry) => void events.push(entry.event) },
    });
    try {
      await agent.run('who am I?');
      const refusals = fixture.unauthorized;
      later(LIFETIME_S * 900);
      await agent.run('and now?');
      expect(fixture.grants).toEqual(['client_credentials', 'client_credentials']);
      expect(fixture.unauthorized).toBe(refusals);
      expect(toolResults(model.calls[3])[0]?.content).toBe('token [REDACTED]');
      const fresh = fixture.issued[1] ?? '';
      expect(fresh).not.toBe('');
      for (const text of [JSON.stringify(agent.journal.entries()), JSON.stringify(events), JSON.stringify(model.calls)]) expect(text).not.toContain(fresh.slice(3));
    } finally {
      await agent.close();
    }
  }, 30_000);
});
