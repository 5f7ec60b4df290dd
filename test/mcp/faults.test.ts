/**
 * MCP servers that fail: do not start, print garbage, die mid-run, hang past a timeout, change
 * their tool list. The server is a real MCP server built with the official SDK (the fixture), so
 * each fault is real: a dead process, a cancelled request, a list_changed notification.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigurationError } from '../../src/core/errors.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { createAgent } from '../../src/agent/createAgent.ts';
import { connectMcpServer } from '../../src/mcp/connect.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { controlled, toolResults, until } from './support.ts';
import type { McpError } from '../../src/mcp/errors.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('a server that cannot be used', { timeout: 60_000 }, () => {
  it('that exits at start: a typed error naming the server, with its stderr', async () => {
    const error = await connectMcpServer(controlled('flaky', 'crash')).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'mcp_connect_failed' });
    expect((error as McpError).server).toBe('flaky');
    expect((error as Error).message).toContain('missing API token');
  });

  it('that writes a character split across two writes to stderr: the error quotes it whole', async () => {
    // "→" is three bytes; the server writes two, waits, then the third, so they arrive as two chunks.
    const script = "process.stderr.write(Buffer.from([0xe2, 0x86])); setTimeout(() => { process.stderr.write(Buffer.from([0x92])); process.stderr.write(' token missing\\n'); process.exit(1); }, 300);";
    const error = await connectMcpServer({ name: 'split', command: process.execPath, args: ['-e', script] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'mcp_connect_failed' });
    expect((error as Error).message).toContain('→ token missing');
    expect((error as Error).message).not.toContain('\uFFFD');
  });

  it('whose command does not exist: a typed error saying what to check', async () => {
    const error = await connectMcpServer({ name: 'ghost', command: join(tmpdir(), 'no-such-mcp-server') }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'mcp_connect_failed' });
    expect((error as Error).message).toMatch(/ENOENT[\s\S]*Check its command/);
  });

  it('that writes garbage to stdout: a typed error once the handshake does not come', async () => {
    const error = await connectMcpServer({ ...controlled('noisy', 'garbage'), connectTimeoutMs: 1_500 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'mcp_connect_failed' });
    expect((error as Error).message).toContain('no handshake within 1500 ms');
  });

  it('fails the run with that error, and a bad config before any run', async () => {
    const agent = createAgent({ model: scriptedModel([{ text: 'never' }]), mcpServers: [controlled('flaky', 'crash')] });
    const result = await agent.start('go').settled;
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('mcp_connect_failed');
    await agent.close();
    expect(() => createAgent({ model: scriptedModel([]), mcpServers: [{ name: 'bad name!', command: 'x' }] })).toThrow(/MCP server config "bad name!" is invalid/);
    expect(() => createAgent({ model: scriptedModel([]), mcpServers: [controlled('twin'), controlled('twin')] })).toThrow(/two MCP servers are named "twin"/);
  });
});

describe("a server tool named like one of the agent's", () => {
  it('fails each run with an error that says which two tools clash and where each comes from', { timeout: 60_000 }, async () => {
    const own = defineTool({ name: 'ctl_pid', description: 'The agent’s own pid tool.', input: z.object({}), execute: () => String(process.pid) });
    const agent = createAgent({ model: scriptedModel([{ text: 'never' }, { text: 'never' }]), tools: [own], mcpServers: [controlled('ctl')] });
    try {
      // The next run too: it does not go on with the agent's own tools only, as if the server had none.
      for (let attempt = 0; attempt < 2; attempt++) {
        const result = await agent.start('go').settled;
        expect(result.status).toBe('failed');
        expect(result.error?.message).toContain('Two tools are named "ctl_pid": a tool of the agent and a tool of MCP server "ctl"');
      }
    } finally {
      await agent.close();
    }
  });
});

describe('roots this machine cannot name as a folder', () => {
  it('are a configuration error when the agent is made, not a failed connection at the first run', () => {
    for (const root of ['file://server/share', 'file:///tmp/a%2Fb']) {
      const make = () => createAgent({ model: scriptedModel([]), mcpServers: [{ name: 'rooted', command: 'node', roots: [root] }] });
      expect(make).toThrow(ConfigurationError);
      expect(make).toThrow(/roots\.0: .*file:\/\/\/ URL of a local folder/);
    }
  });
});

describe('an HTTP server URL with user:password@', () => {
  it('is a configuration error that names the fix and does not repeat the password', () => {
    const make = () => createAgent({ model: scriptedModel([]), mcpServers: [{ name: 'creds', url: 'http://user:hunter2secret@127.0.0.1:1/mcp' }] });
    expect(make).toThrow(ConfigurationError);
    expect(make).toThrow(/user:password@.*headers/);
    expect(make).not.toThrow(/hunter2secret/);
  });
});

describe('a server that dies mid-run', () => {
  it('gives the call in flight a tool-error observation and is restarted by the next call', async () => {
    const pids: number[] = [];
    let turn = 0;
    const model = scriptedModel((request) => {
      turn += 1;
      const last = toolResults(request).at(-1);
      if (last?.name === 'ctl_pid') pids.push(Number(last.content));
      if (turn === 1) return { toolCalls: [{ name: 'ctl_pid', arguments: {} }] };
      if (turn === 2) return { toolCalls: [{ name: 'ctl_sleep', arguments: { ms: 600_000 } }] };
      if (turn === 3) return { toolCalls: [{ name: 'ctl_pid', arguments: {} }] };
      return { text: 'recovered' };
    });
    // Vouched for as read-only: otherwise the run, tainted by the first result, would hold the next calls.
    const agent = createAgent({ model, mcpServers: [{ ...controlled('ctl'), readOnlyTools: ['pid', 'sleep'] }] });
    try {
      const run = agent.start('survive a crash');
      expect(await until(() => agent.journal.entries().some((e) => e.event.type === 'tool.started' && e.event.tool === 'ctl_sleep'))).toBe(true);
      process.kill(pids[0] as number, 'SIGKILL');
      const result = await run.result;

      expect(result.text).toBe('recovered');
      const died = toolResults(model.calls[2]).at(-1);
      expect(died?.name).toBe('ctl_sleep');
      expect(died?.content).toMatch(/closed while a call was in flight/);
      // The next call started a new server process.
      expect(pids).toHaveLength(2);
      expect(pids[1]).not.toBe(pids[0]);
      expect(alive(pids[1] as number)).toBe(true);
    } finally {
      await agent.close();
    }
    // Closing the agent stops its servers.
    expect(await until(() => !alive(pids[1] as number))).toBe(true);
  });
});

describe('a server whose restart fails', () => {
  it('fails later calls at once with the restart error, without starting it again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'actorloop-mcp-restart-'));
    dirs.push(dir);
    const starts = join(dir, 'starts');
    const broken = join(dir, 'broken');
    const server = await connectMcpServer(controlled('ctl', undefined, { START_LOG: starts, CRASH_IF_EXISTS: broken }));
    const tool = async (name: string) => (await server.tools()).find((t) => t.name === name);
    const context = () => ({ signal: new AbortController().signal, toolCallId: 'c', idempotencyKey: 'r:c', runId: 'r', agentId: 'a' });
    try {
      const pidTool = await tool('ctl_pid');
      const pid = Number(await pidTool?.execute({}, context()));
      writeFileSync(broken, 'from now on the server cannot start');
      process.kill(pid, 'SIGKILL');
      expect(await until(() => !alive(pid))).toBe(true);

      const restart = await Promise.resolve(pidTool?.execute({}, context())).catch((e: unknown) => e);
      expect(restart).toMatchObject({ code: 'mcp_connect_failed' });
      expect((restart as Error).message).toContain('missing API token');
      const again = await Promise.resolve(pidTool?.execute({}, context())).catch((e: unknown) => e);
      expect(again).toBe(restart);
      // One first start and one restart attempt: the failed restart is not retried.
      expect(readFileSync(starts, 'utf8')).toBe('start\nstart\n');
    } finally {
      await server.close();
    }
  });
});

describe('a server closed while it is being restarted', () => {
  it('does not leave the restarted process running: it is stopped when its start completes', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'actorloop-mcp-close-restart-'));
    dirs.push(dir);
    const pidLog = join(dir, 'pids');
    const server = await connectMcpServer(controlled('ctl', undefined, { PID_LOG: pidLog }));
    const context = () => ({ signal: new AbortController().signal, toolCallId: 'c', idempotencyKey: 'r:c', runId: 'r', agentId: 'a' });
    const pidTool = (await server.tools()).find((t) => t.name === 'ctl_pid');
    const first = Number(await pidTool?.execute({}, context()));
    process.kill(first, 'SIGKILL');
    expect(await until(() => !alive(first))).toBe(true);
    // The next call starts a new process; the server is closed before that start completes.
    const restarted = Promise.resolve(pidTool?.execute({}, context())).catch((e: unknown) => e);
    await server.close();
    expect(await restarted).toMatchObject({ code: 'mcp_server_closed' });
    const pids = (): number[] => readFileSync(pidLog, 'utf8').trim().split('\n').map(Number);
    expect(await until(() => pids().length === 2)).toBe(true);
    expect(await until(() => !alive(pids()[1] as number), 2_000)).toBe(true);
  });
});

describe('a call that outlives its timeout', () => {
  it('is cancelled on the server (MCP cancellation) and the model gets a timeout observation', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'actorloop-mcp-marker-'));
    dirs.push(dir);
    const marker = join(dir, 'marker');
    const model = scriptedModel([{ toolCalls: [{ name: 'ctl_sleep', arguments: { ms: 600_000 } }] }, { text: 'gave up' }]);
    const agent = createAgent({ model, mcpServers: [controlled('ctl', undefined, { MARKER_FILE: marker })], resilience: { tools: { timeoutMs: 1_000 } } });
    try {
      await agent.run('wait');
      const [observation] = toolResults(model.calls[1]);
      expect(observation?.content).toMatch(/timed out|timeout/i);
      // The server creates the file and then writes it: wait for what it writes, not for the file.
      expect(await until(() => existsSync(marker) && readFileSync(marker, 'utf8') !== '')).toBe(true);
      expect(readFileSync(marker, 'utf8')).toBe('cancelled\n');
    } finally {
      await agent.close();
    }
  });
});

describe("a server's tool list that changes", () => {
  it('is fetched again between iterations: the next model call sees the new tool, and can call it', async () => {
    const model = scriptedModel([
      { toolCalls: [{ name: 'ctl_grow', arguments: {} }] },
      { toolCalls: [{ name: 'ctl_extra_1', arguments: {} }] },
      { text: 'grown' },
    ]);
    const agent = createAgent({ model, mcpServers: [{ ...controlled('ctl'), readOnlyTools: ['extra_*'] }] });
    try {
      await agent.run('grow');
      const names = (call: number) => model.calls[call]?.tools?.map((tool) => tool.name) ?? [];
      expect(names(0)).not.toContain('ctl_extra_1');
      expect(names(1)).toContain('ctl_extra_1');
      expect(toolResults(model.calls[2]).at(-1)).toEqual({ name: 'ctl_extra_1', content: 'extra_1 ran' });
    } finally {
      await agent.close();
    }
  });
});

describe('a tool list that changes while it is being listed', () => {
  it('is listed again next time: the change notice that came during the listing is not lost', { timeout: 60_000 }, async () => {
    const changing = fileURLToPath(new URL('./fixtures/changingListServer.ts', import.meta.url));
    const server = await connectMcpServer({ name: 'chg', command: process.execPath, args: ['--import', 'tsx', changing], connectTimeoutMs: 10_000 });
    try {
      expect((await server.tools()).map((tool) => tool.name)).toEqual(['chg_first']);
      expect(server.toolsChanged).toBe(true);
      expect((await server.tools()).map((tool) => tool.name)).toEqual(['chg_first', 'chg_second']);
    } finally {
      await server.close();
    }
  });
});

describe('a tool list whose names clash on the client', () => {
  it('is refused each time it is asked for, not answered with the list from before', { timeout: 60_000 }, async () => {
    const changing = fileURLToPath(new URL('./fixtures/changingListServer.ts', import.meta.url));
    const server = await connectMcpServer({ name: 'chg', command: process.execPath, args: ['--import', 'tsx', changing], env: { CLASH: '1' }, connectTimeoutMs: 10_000 });
    try {
      await expect(server.tools()).rejects.toThrow(/"a.b" and "a b"/);
      await expect(server.tools()).rejects.toThrow(/"a.b" and "a b"/);
    } finally {
      await server.close();
    }
  });
});

describe('a server whose list pages loop', () => {
  it('is a typed error naming the list, not the same items again and again (or a list that never ends)', { timeout: 60_000 }, async () => {
    const looping = fileURLToPath(new URL('./fixtures/loopingCursorServer.ts', import.meta.url));
    const server = await connectMcpServer({ name: 'loop', command: process.execPath, args: ['--import', 'tsx', looping], connectTimeoutMs: 10_000 });
    try {
      for (const list of [() => server.resources(), () => server.resourceTemplates(), () => server.prompts(), () => server.tools()]) {
        const error = await list().catch((e: unknown) => e);
        expect(error).toMatchObject({ code: 'mcp_request_failed', server: 'loop' });
        expect((error as Error).message).toMatch(/cursor "again" twice/);
      }
    } finally {
      await server.close();
    }
  });
});

describe('an agent whose second server cannot start', () => {
  it('stops the first one it started, instead of leaving its process behind for every failed run', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'actorloop-mcp-partial-'));
    dirs.push(dir);
    const pidLog = join(dir, 'pids');
    const agent = createAgent({ model: scriptedModel([{ text: 'never' }, { text: 'never' }]), mcpServers: [controlled('good', undefined, { PID_LOG: pidLog }), controlled('flaky', 'crash')] });
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        const result = await agent.start('go').settled;
        expect(result.error?.code).toBe('mcp_connect_failed');
      }
    } finally {
      await agent.close();
    }
    // One good server per failed run; a server that started but was not stopped writes its pid late.
    const pids = (): number[] => (existsSync(pidLog) ? readFileSync(pidLog, 'utf8').trim().split('\n').map(Number) : []);
    expect(await until(() => pids().length === 2)).toBe(true);
    expect(await until(() => pids().every((pid) => !alive(pid)), 2_000)).toBe(true);
  });
});
