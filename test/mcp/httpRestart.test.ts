/**
 * An HTTP MCP server that dies: a real streamable HTTP server on 127.0.0.1 stopped and started
 * again on the same port (its sessions gone), or left down.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/createAgent.ts';
import type { LoopEvent } from '../../src/core/loopEvent.ts';
import { connectMcpServer, type McpServer } from '../../src/mcp/connect.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { startOAuthFixture, type OAuthFixture } from './fixtures/oauthServer.ts';
import { toolResults } from './support.ts';

const toolContext = { signal: new AbortController().signal, toolCallId: 'c1', idempotencyKey: 'restart:c1', runId: 'restart', agentId: 'restart' };

describe('an HTTP MCP server that dies', () => {
  let fixture: OAuthFixture | undefined;
  let server: McpServer | undefined;
  afterEach(async () => {
    await server?.close();
    await fixture?.stop();
    server = undefined;
    fixture = undefined;
  });

  it('started again on the same port: the next call works on a new session and an mcp.restarted event says so', async () => {
    fixture = await startOAuthFixture({ auth: false });
    const model = scriptedModel([
      { toolCalls: [{ name: 'web_ping', arguments: {} }] },
      { text: 'first' },
      { toolCalls: [{ name: 'web_ping', arguments: {} }] },
      { text: 'second' },
    ]);
    const events: LoopEvent[] = [];
    const agent = createAgent({ model, mcpServers: [{ name: 'web', url: fixture.url }], observe: { events: (entry) => void events.push(entry.event) } });
    try {
      await agent.run('ping once');
      expect(events.filter((event) => event.type === 'mcp.restarted')).toEqual([]);
      await fixture.stop();
      await fixture.start();
      const second = await agent.run('ping again');
      expect(second.text).toBe('second');
      expect(toolResults(model.calls[3])[0]).toEqual({ name: 'web_ping', content: 'pong' });
      expect(events.filter((event) => event.type === 'mcp.restarted')).toEqual([{ type: 'mcp.restarted', server: 'web', attempts: 1 }]);
    } finally {
      await agent.close();
    }
  }, 30_000);

  it('left down: a call fails with a typed error naming it after bounded reconnects, and works once it is back', async () => {
    fixture = await startOAuthFixture({ auth: false });
    const restarts: number[] = [];
    server = await connectMcpServer({ name: 'web', url: fixture.url }, { onRestarted: (_, attempts) => void restarts.push(attempts) });
    const ping = (await server.tools()).find((tool) => tool.name === 'web_ping');
    if (ping === undefined) throw new Error('no ping tool');
    await fixture.stop();
    // The call in flight as the server went may or may not have reached it: it fails, naming the server, and is not repeated.
    const inFlight = await Promise.resolve(ping.execute({}, toolContext)).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(inFlight).toMatchObject({ server: 'web', code: expect.stringMatching(/^mcp_server_(closed|unavailable)$/) });
    const failed = ping.execute({}, toolContext);
    await expect(failed).rejects.toMatchObject({ code: 'mcp_server_unavailable' });
    await expect(failed).rejects.toThrow(/MCP server "web" is down: 3 reconnects failed/);
    await fixture.start();
    expect(JSON.stringify(await ping.execute({}, toolContext))).toContain('pong');
    expect(restarts).toEqual([1]);
  }, 30_000);
});
