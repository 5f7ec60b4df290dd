/**
 * OAuth 2.1 against a real streamable HTTP MCP server behind a small authorization server on
 * 127.0.0.1: registration, PKCE sign-in through a user's authorize handler, refresh after expiry,
 * client credentials, a token store, and tokens kept out of journals, events and model requests.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { createAgent } from '../../src/agent/createAgent.ts';
import { ConfigurationError } from '../../src/core/errors.ts';
import type { LoopEvent } from '../../src/core/loopEvent.ts';
import { connectMcpServer, type McpServer } from '../../src/mcp/connect.ts';
import { oauthSession, type McpTokenStore } from '../../src/mcp/oauth.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { startOAuthFixture, type OAuthFixture } from './fixtures/oauthServer.ts';
import { toolResults } from './support.ts';

const REDIRECT = 'http://127.0.0.1:1/callback';
const toolContext = { signal: new AbortController().signal, toolCallId: 'c1', idempotencyKey: 'oauth:c1', runId: 'oauth', agentId: 'oauth' };

/** The person's part, done by a program: open the authorization URL, read the code off the redirect. */
function signInHandler(seen: URL[]): (url: URL) => Promise<string> {
  return async (url) => {
    seen.push(url);
    const response = await fetch(url, { redirect: 'manual' });
    const code = new URL(response.headers.get('location') ?? '').searchParams.get('code');
    if (code === null) throw new Error('no code in the redirect');
    return code;
  };
}

async function callTool(server: McpServer, tool: string): Promise<string> {
  const found = (await server.tools()).find((candidate) => candidate.name === `secure_${tool}`);
  if (found === undefined) throw new Error(`no tool ${tool}`);
  return JSON.stringify(await found.execute({}, toolContext));
}

describe('OAuth for HTTP MCP servers', () => {
  let fixture: OAuthFixture | undefined;
  let server: McpServer | undefined;
  afterEach(async () => {
    await server?.close();
    await fixture?.stop();
    server = undefined;
    fixture = undefined;
  });

  it('registers, signs in with PKCE through the authorize handler, and calls with the token', async () => {
    fixture = await startOAuthFixture();
    const seen: URL[] = [];
    server = await connectMcpServer({ name: 'secure', url: fixture.url, auth: { redirectUrl: REDIRECT, authorize: signInHandler(seen) } });
    const result = await callTool(server, 'whoami');
    expect(fixture.issued).toHaveLength(1);
    expect(result).toContain(`token ${fixture.issued[0]}`);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.searchParams.get('code_challenge_method')).toBe('S256');
    expect(fixture.grants).toEqual(['authorization_code']);
  }, 30_000);

  it('refreshes an expired token with its refresh token, without a second sign-in', async () => {
    fixture = await startOAuthFixture();
    const seen: URL[] = [];
    server = await connectMcpServer({ name: 'secure', url: fixture.url, auth: { redirectUrl: REDIRECT, authorize: signInHandler(seen) } });
    await callTool(server, 'whoami');
    fixture.expireTokens();
    const after = await callTool(server, 'whoami');
    expect(fixture.grants).toEqual(['authorization_code', 'refresh_token']);
    expect(fixture.issued).toHaveLength(2);
    expect(after).toContain(`token ${fixture.issued[1]}`);
    expect(seen).toHaveLength(1);
  }, 30_000);

  it('fails with a typed error naming the server when a sign-in is needed and there is no authorize handler', async () => {
    fixture = await startOAuthFixture();
    const connecting = connectMcpServer({ name: 'secure', url: fixture.url, auth: {} });
    await expect(connecting).rejects.toMatchObject({ code: 'mcp_authorization_required' });
    await expect(connecting).rejects.toThrow(/MCP server "secure" needs OAuth authorization: a person must sign in at http:\/\/127\.0\.0\.1:\d+\/authorize/);
  }, 30_000);

  it('gets a token with client credentials for a pre-registered client, no person involved', async () => {
    fixture = await startOAuthFixture({ client: { id: 'robot', secret: 'robot-secret-1' } });
    server = await connectMcpServer({ name: 'secure', url: fixture.url, auth: { grant: 'client_credentials', clientId: 'robot', clientSecret: 'robot-secret-1' } });
    expect(await callTool(server, 'ping')).toContain('pong');
    expect(fixture.grants).toEqual(['client_credentials']);
  }, 30_000);

  it('keeps tokens in a user token store, and a new connection uses them without signing in', async () => {
    fixture = await startOAuthFixture();
    const kept = new Map<string, OAuthTokens>();
    const tokenStore: McpTokenStore = { load: (name) => kept.get(name), save: (name, tokens) => void kept.set(name, tokens) };
    const seen: URL[] = [];
    const first = await connectMcpServer({ name: 'secure', url: fixture.url, auth: { redirectUrl: REDIRECT, authorize: signInHandler(seen), tokenStore } });
    await first.close();
    expect(kept.get('secure')?.access_token).toBe(fixture.issued[0]);
    server = await connectMcpServer({ name: 'secure', url: fixture.url, auth: { redirectUrl: REDIRECT, tokenStore } });
    expect(await callTool(server, 'whoami')).toContain(`token ${fixture.issued[0]}`);
    expect(seen).toHaveLength(1);
  }, 30_000);

  it('rejects an authorize handler without the redirect URL it listens on, at config time', async () => {
    await expect(connectMcpServer({ name: 'secure', url: 'http://127.0.0.1:1/mcp', auth: { authorize: async () => 'code' } })).rejects.toThrow(ConfigurationError);
    await expect(connectMcpServer({ name: 'secure', url: 'http://127.0.0.1:1/mcp', auth: { grant: 'client_credentials' } })).rejects.toThrow(/client_credentials needs clientId/);
  });

  it('keeps tokens a user provider already had (from an earlier sign-in) out of what the model sees when a tool echoes one', async () => {
    fixture = await startOAuthFixture();
    const kept = new Map<string, OAuthTokens>();
    const tokenStore: McpTokenStore = { load: (name) => kept.get(name), save: (name, tokens) => void kept.set(name, tokens) };
    const first = await connectMcpServer({ name: 'secure', url: fixture.url, auth: { redirectUrl: REDIRECT, authorize: signInHandler([]), tokenStore } });
    await first.close();
    const saved = kept.get('secure');
    expect(saved?.access_token).toBe(fixture.issued[0]);
    // The user's own provider, as one that keeps tokens on disk would be on the next start.
    let client: OAuthClientInformationMixed | undefined;
    const provider: OAuthClientProvider = {
      redirectUrl: REDIRECT,
      clientMetadata: { client_name: 'mine', redirect_uris: [REDIRECT] },
      clientInformation: () => client,
      saveClientInformation: (info) => void (client = info),
      tokens: () => saved,
      saveTokens: () => undefined,
      redirectToAuthorization: () => undefined,
      saveCodeVerifier: () => undefined,
      codeVerifier: () => 'unused',
    };
    const model = scriptedModel([{ toolCalls: [{ name: 'secure_whoami', arguments: {} }] }, { text: 'done' }]);
    const agent = createAgent({ model, mcpServers: [{ name: 'secure', url: fixture.url, auth: provider }] });
    try {
      await agent.run('who am I?');
      expect(toolResults(model.calls[1])[0]?.content).toBe('token [REDACTED]');
      expect(JSON.stringify(agent.journal.entries())).not.toContain(saved?.access_token.slice(3));
    } finally {
      await agent.close();
    }
  }, 30_000);

  it('puts the client secret and tokens a user provider hands over on the redaction list', async () => {
    const provider: OAuthClientProvider = {
      redirectUrl: REDIRECT,
      clientMetadata: { client_name: 'mine', redirect_uris: [REDIRECT] },
      clientInformation: () => ({ client_id: 'mine', client_secret: 'kept-client-secret' }),
      tokens: () => ({ access_token: 'kept-access', refresh_token: 'kept-refresh', token_type: 'Bearer' }),
      saveTokens: () => undefined,
      redirectToAuthorization: () => undefined,
      saveCodeVerifier: () => undefined,
      codeVerifier: () => 'unused',
    };
    const secrets: string[] = [];
    const session = oauthSession('secure', 'http://127.0.0.1:1/mcp', provider, (secret) => void secrets.push(secret));
    await session.provider.clientInformation();
    await session.provider.tokens();
    expect(secrets).toEqual(['kept-client-secret', 'kept-access', 'kept-refresh']);
  });

  it('keeps the access and refresh tokens out of the journal, the events and the model requests, even when a tool echoes one', async () => {
    fixture = await startOAuthFixture();
    const model = scriptedModel([{ toolCalls: [{ name: 'secure_whoami', arguments: {} }] }, { text: 'done' }]);
    const events: LoopEvent[] = [];
    const agent = createAgent({
      model,
      mcpServers: [{ name: 'secure', url: fixture.url, auth: { redirectUrl: REDIRECT, authorize: signInHandler([]) } }],
      observe: { events: (entry) => void events.push(entry.event) },
    });
    try {
      await agent.run('who am I?');
      const token = fixture.issued[0] ?? '';
      expect(token).not.toBe('');
      // The tool did answer (with the token, redacted): the search below looks at real content.
      expect(toolResults(model.calls[1])[0]?.content).toBe('token [REDACTED]');
      const places = [JSON.stringify(agent.journal.entries()), JSON.stringify(events), JSON.stringify(model.calls)];
      for (const text of places) expect(text).not.toContain(token.slice(3));
    } finally {
      await agent.close();
    }
  }, 30_000);
});
