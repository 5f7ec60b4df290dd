/**
 * MCP tools from real servers from npm: server-everything over stdio and over streamable HTTP,
 * server-filesystem confined to a temp folder. Scripted models decide what to call; everything
 * else — the servers, the transports, the agent loop — is real.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/createAgent.ts';
import { connectMcpServer, type McpServer } from '../../src/mcp/connect.ts';
import { gates } from '../../src/policy/gates.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { everythingOverHttp, everythingStdio, filesystemJs, toolResults } from './support.ts';

describe('server-everything over stdio', () => {
  let server: McpServer;
  beforeAll(async () => {
    server = await connectMcpServer(everythingStdio);
  });
  afterAll(() => server.close());

  it('lists its tools as <server>_<tool>, as untrusted as MCP allows: an untrusted server\'s annotations count for nothing', async () => {
    const tools = await server.tools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect([...byName.keys()]).toEqual(expect.arrayContaining(['everything_echo', 'everything_get-sum', 'everything_get-tiny-image']));
    const echo = byName.get('everything_echo');
    // It claims readOnlyHint; nobody vouched for the server, so it is taken as MCP's defaults describe a tool.
    expect(echo?.permissions).toEqual(['mcp', 'mcp:everything', 'mcp:destructive', 'mcp:open-world']);
    expect(echo?.idempotent).toBe(false);
    expect(echo?.sideEffects).toBe(true);
    expect(echo?.spec.parameters).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });
  });

  it('gives an agent its tools: the model calls echo and get-sum and sees their results', async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          { name: 'everything_echo', arguments: { message: 'hello over MCP' } },
          { name: 'everything_get-sum', arguments: { a: 2, b: 3 } },
        ],
      },
      { text: 'done' },
    ]);
    const agent = createAgent({ model, mcpServers: [everythingStdio] });
    try {
      const result = await agent.run('use the tools');
      expect(result.text).toBe('done');
      // The model saw the MCP tools' specs on its first call (connected on first use).
      expect(model.calls[0]?.tools?.map((tool) => tool.name)).toEqual(expect.arrayContaining(['everything_echo', 'everything_get-sum']));
      const results = toolResults(model.calls[1]);
      expect(results[0]).toEqual({ name: 'everything_echo', content: 'Echo: hello over MCP' });
      expect(results[1]?.name).toBe('everything_get-sum');
      expect(results[1]?.content).toContain('5');
    } finally {
      await agent.close();
    }
  });

  it("applies the agent's tool profile to the server's tools", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: 'everything_echo', arguments: { message: 'kept' } }] }, { text: 'ok' }]);
    const agent = createAgent({ model, mcpServers: [everythingStdio], policy: { toolProfile: { include: ['everything_echo', 'everything_get-*'], exclude: ['everything_get-env'] } } });
    try {
      await agent.run('profiled');
      const offered = model.calls[0]?.tools?.map((tool) => tool.name) ?? [];
      expect(offered).toContain('everything_echo');
      expect(offered).toContain('everything_get-sum');
      expect(offered).not.toContain('everything_get-env');
      expect(offered).not.toContain('everything_toggle-simulated-logging');
      expect(toolResults(model.calls[1])).toEqual([{ name: 'everything_echo', content: 'Echo: kept' }]);
    } finally {
      await agent.close();
    }
  });

  it("checks arguments against the tool's JSON Schema before calling, and tells the model what is wrong", async () => {
    const model = scriptedModel([{ toolCalls: [{ name: 'everything_get-sum', arguments: { a: 'two', b: 3 } }] }, { text: 'fixed' }]);
    const agent = createAgent({ model, mcpServers: [everythingStdio] });
    try {
      await agent.run('add');
      const [observation] = toolResults(model.calls[1]);
      expect(observation?.content).toMatch(/\ba\b/);
      expect(observation?.content).toMatch(/number/);
      const events = agent.journal.entries().map((entry) => entry.event);
      expect(events.some((event) => event.type === 'policy.evaluated' && event.decision === 'invalid')).toBe(true);
      expect(events.some((event) => event.type === 'tool.started')).toBe(false);
    } finally {
      await agent.close();
    }
  });

  it("treats the server's env values as secrets: a tool that dumps its environment leaks nothing", async () => {
    const secret = 'env-secret-9d8c7b6a5f';
    const model = scriptedModel([{ toolCalls: [{ name: 'everything_get-env', arguments: {} }] }, { text: 'ok' }]);
    const agent = createAgent({ model, mcpServers: [{ ...everythingStdio, env: { SERVICE_TOKEN: secret } }] });
    try {
      await agent.run('show the environment');
      const [observation] = toolResults(model.calls[1]);
      expect(observation?.content).toContain('SERVICE_TOKEN');
      expect(JSON.stringify(model.calls[1]?.messages)).not.toContain(secret);
      expect(JSON.stringify(agent.journal.entries())).not.toContain(secret);
    } finally {
      await agent.close();
    }
  });

  it('summarises an image by type and size and never puts base64 into the conversation', async () => {
    const model = scriptedModel([{ toolCalls: [{ name: 'everything_get-tiny-image', arguments: {} }] }, { text: 'seen' }]);
    const agent = createAgent({ model, mcpServers: [everythingStdio] });
    try {
      await agent.run('show me');
      const [observation] = toolResults(model.calls[1]);
      expect(observation?.content).toMatch(/\[image: image\/png, \d+(\.\d)? (B|KB)\]/);
      expect(JSON.stringify(model.calls[1]?.messages)).not.toMatch(/[A-Za-z0-9+/]{200,}/);
    } finally {
      await agent.close();
    }
  });
});

describe('server-everything over streamable HTTP', () => {
  let child: ChildProcess;
  let url: string;
  beforeAll(async () => {
    ({ url, child } = await everythingOverHttp());
  });
  afterAll(() => {
    child.kill();
  });

  it('connects on 127.0.0.1, lists the same tools and calls them', async () => {
    const model = scriptedModel([{ toolCalls: [{ name: 'everything_echo', arguments: { message: 'over HTTP' } }] }, { text: 'ok' }]);
    const agent = createAgent({ model, mcpServers: [{ name: 'everything', url }] });
    try {
      await agent.run('echo');
      expect(toolResults(model.calls[1])).toEqual([{ name: 'everything_echo', content: 'Echo: over HTTP' }]);
    } finally {
      await agent.close();
    }
  });

  it('treats header values as secrets: never in the journal, events or the next model request', async () => {
    const token = 'mcp-header-secret-4f9a1c2b7e';
    const model = scriptedModel([{ toolCalls: [{ name: 'everything_echo', arguments: { message: `token is ${token}` } }] }, { text: 'ok' }]);
    const agent = createAgent({ model, mcpServers: [{ name: 'everything', url, headers: { authorization: `Bearer ${token}` } }] });
    try {
      await agent.run('leak it');
      expect(JSON.stringify(agent.journal.entries())).not.toContain(token);
      expect(JSON.stringify(model.calls[1]?.messages)).not.toContain(token);
      expect(toolResults(model.calls[1])[0]?.content).toContain('[REDACTED]');
    } finally {
      await agent.close();
    }
  });
});

describe('a server that only speaks the older SSE transport', () => {
  it('is reached by falling back from streamable HTTP to SSE', async () => {
    const { url, child } = await everythingOverHttp('sse');
    const server = await connectMcpServer({ name: 'legacy', url });
    try {
      const echo = (await server.tools()).find((tool) => tool.name === 'legacy_echo');
      const context = { signal: new AbortController().signal, toolCallId: 'c1', idempotencyKey: 'r:c1', runId: 'r', agentId: 'a' };
      expect(await echo?.execute({ message: 'via SSE' }, context)).toBe('Echo: via SSE');
    } finally {
      await server.close();
      child.kill();
    }
  });
});

describe('server-filesystem confined to a temp folder', () => {
  let root: string;
  let outside: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'actorloop-mcpfs-'));
    outside = mkdtempSync(join(tmpdir(), 'actorloop-outside-'));
    writeFileSync(join(root, 'notes.txt'), 'inside the root');
    writeFileSync(join(outside, 'secret.txt'), 'outside the root');
  });
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });
  const files = () => ({ name: 'files', command: process.execPath, args: [filesystemJs, root] });

  it('reads inside its root and refuses outside it, as a tool error the model sees', async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          { name: 'files_read_text_file', arguments: { path: join(root, 'notes.txt') } },
          { name: 'files_read_text_file', arguments: { path: join(outside, 'secret.txt') } },
        ],
      },
      { text: 'read' },
    ]);
    const agent = createAgent({ model, mcpServers: [files()] });
    try {
      await agent.run('read both');
      const [inside, refused] = toolResults(model.calls[1]);
      expect(inside?.content).toBe('inside the root');
      expect(refused?.content).toContain('Access denied');
      expect(refused?.content).not.toContain('outside the root');
      const finished = agent.journal.entries().flatMap((entry) => (entry.event.type === 'tool.finished' ? [entry.event.status] : []));
      expect(finished.sort()).toEqual(['error', 'ok']);
    } finally {
      await agent.close();
    }
  });

  it("lets actorloop's gate deny its destructive tools by permission", async () => {
    const target = join(root, 'written.txt');
    const model = scriptedModel([{ toolCalls: [{ name: 'files_write_file', arguments: { path: target, content: 'x' } }] }, { text: 'denied' }]);
    const agent = createAgent({ model, mcpServers: [files()], policy: { gate: gates.rules({ permissions: { deny: ['mcp:destructive'] } }) } });
    try {
      await agent.run('write');
      expect(existsSync(target)).toBe(false);
      const events = agent.journal.entries().map((entry) => entry.event);
      expect(events.some((event) => event.type === 'policy.evaluated' && event.tool === 'files_write_file' && event.decision === 'deny')).toBe(true);
      expect(readFileSync(join(root, 'notes.txt'), 'utf8')).toBe('inside the root');
    } finally {
      await agent.close();
    }
  });
});
