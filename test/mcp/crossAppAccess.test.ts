/**
 * Cross-app access against a local identity provider and authorization server on 127.0.0.1:
 * the user's ID token is exchanged at the IdP for an identity assertion grant for the MCP
 * server's authorization server and resource, which that server trades for an access token.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/createAgent.ts';
import { ConfigurationError } from '../../src/core/errors.ts';
import type { LoopEvent } from '../../src/core/loopEvent.ts';
import { connectMcpServer, type McpServer } from '../../src/mcp/connect.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { startOAuthFixture, type OAuthFixture } from './fixtures/oauthServer.ts';
import { toolResults } from './support.ts';

const ID_TOKEN = 'eyJ-user-id-token-from-the-idp';
const client = { id: 'crm-app', secret: 'crm-app-secret-1' };
const toolContext = { signal: new AbortController().signal, toolCallId: 'c1', idempotencyKey: 'xaa:c1', runId: 'xaa', agentId: 'xaa' };

function crossApp(fixture: OAuthFixture, idToken: string | (() => Promise<string>) = ID_TOKEN) {
  const origin = new URL(fixture.url).origin;
  return { grant: 'cross_app_access' as const, clientId: client.id, clientSecret: client.secret, idToken, idpTokenEndpoint: `${origin}/idp/token`, idpClientId: 'idp-client' };
}

describe('cross-app access for HTTP MCP servers', () => {
  let fixture: OAuthFixture | undefined;
  let server: McpServer | undefined;
  afterEach(async () => {
    await server?.close();
    await fixture?.stop();
    server = undefined;
    fixture = undefined;
  });

  it('exchanges the ID token at the IdP for a grant naming the authorization server and resource, then trades it for an access token', async () => {
    fixture = await startOAuthFixture({ client, idp: { idToken: ID_TOKEN } });
    const origin = new URL(fixture.url).origin;
    server = await connectMcpServer({ name: 'crm', url: fixture.url, auth: crossApp(fixture, async () => ID_TOKEN) });
    const whoami = (await server.tools()).find((tool) => tool.name === 'crm_whoami');
    expect(JSON.stringify(await whoami?.execute({}, toolContext))).toContain(`token ${fixture.issued[0]}`);
    expect(fixture.exchanges).toHaveLength(1);
    expect(fixture.exchanges[0]).toMatchObject({ subject_token: ID_TOKEN, audience: origin, resource: fixture.url, client_id: 'idp-client' });
    expect(fixture.grants).toEqual(['urn:ietf:params:oauth:grant-type:jwt-bearer']);
  }, 30_000);

  it('fails with a typed error saying the identity provider refused, when the ID token is not accepted', async () => {
    fixture = await startOAuthFixture({ client, idp: { idToken: ID_TOKEN } });
    const connecting = connectMcpServer({ name: 'crm', url: fixture.url, auth: crossApp(fixture, 'a-stale-id-token') });
    await expect(connecting).rejects.toMatchObject({ code: 'mcp_authorization_required' });
    await expect(connecting).rejects.toThrow(/identity provider refused .*invalid_grant: the ID token is not valid/);
    expect(fixture.grants).toEqual([]);
  }, 30_000);

  it('rejects cross_app_access options without the ID token or the IdP, at config time', async () => {
    const url = 'http://127.0.0.1:1/mcp';
    await expect(connectMcpServer({ name: 'crm', url, auth: { grant: 'cross_app_access', clientId: 'crm-app', idpTokenEndpoint: 'http://127.0.0.1:1/idp/token', idpClientId: 'c' } })).rejects.toThrow(ConfigurationError);
    await expect(connectMcpServer({ name: 'crm', url, auth: { grant: 'cross_app_access', clientId: 'crm-app', idToken: ID_TOKEN, idpClientId: 'c' } })).rejects.toThrow(/cross_app_access needs idpTokenEndpoint/);
  });

  it('keeps the access token it got out of the journal, events and model requests, though a tool echoes it', async () => {
    fixture = await startOAuthFixture({ client, idp: { idToken: ID_TOKEN } });
    const model = scriptedModel([{ toolCalls: [{ name: 'crm_whoami', arguments: {} }] }, { text: 'done' }]);
    const events: LoopEvent[] = [];
    const agent = createAgent({ model, mcpServers: [{ name: 'crm', url: fixture.url, auth: crossApp(fixture, async () => ID_TOKEN) }], observe: { events: (entry) => void events.push(entry.event) } });
    try {
      await agent.run('who am I?');
      expect(toolResults(model.calls[1])[0]?.content).toBe('token [REDACTED]');
      const token = fixture.issued[0] ?? '';
      expect(token).not.toBe('');
      const places = [JSON.stringify(agent.journal.entries()), JSON.stringify(events), JSON.stringify(model.calls)];
      for (const text of places) expect(text).not.toContain(token.slice(3));
    } finally {
      await agent.close();
    }
  }, 30_000);
});
