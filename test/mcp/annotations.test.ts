/**
 * A real MCP server's tool annotations are the server's claims. Absent ones mean what the MCP
 * specification says (may change and destroy things, not safe to repeat, reaches outside), and a
 * claim that would make a tool more trusted counts only when the user's config says so. Seen
 * through what the gate, the taint policy and a resume do with the fixture server's tools:
 * `sleep` has no annotations, `pid` claims `readOnlyHint: true`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/createAgent.ts';
import type { AgentRun } from '../../src/agent/types.ts';
import type { LoopEvent } from '../../src/core/loopEvent.ts';
import { checkMcpServerConfig, connectMcpServer, type McpServerConfig } from '../../src/mcp/connect.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { META_VERSION } from '../../src/persistence/records.ts';
import { readRunHeader } from '../../src/persistence/runLog.ts';
import { gates } from '../../src/policy/gates.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import type { Tool } from '../../src/tools/types.ts';
import { humanAwaited, removeTempDirs, runFiles, tempDir } from '../persistence/support.ts';
import { controlled, filesystemJs, toolResults } from './support.ts';

afterAll(removeTempDirs);

/** Starting a fixture server under tsx takes a few seconds on a loaded machine. */
const SLOW = 60_000;

async function listed(config: McpServerConfig): Promise<Map<string, Tool>> {
  const server = await connectMcpServer(config);
  try {
    return new Map((await server.tools()).map((tool) => [tool.name, tool]));
  } finally {
    await server.close();
  }
}

const metadata = (tool: Tool | undefined) => ({ permissions: tool?.permissions, sideEffects: tool?.sideEffects === true, idempotent: tool?.idempotent });
const UNTRUSTED = { permissions: ['mcp', 'mcp:ctl', 'mcp:destructive', 'mcp:open-world'], sideEffects: true, idempotent: false };

const events = (entries: readonly { readonly event: LoopEvent }[]): LoopEvent[] => entries.map((entry) => entry.event);

describe('MCP tool annotations', () => {
  it(
    'mean MCP’s defaults when absent, and are believed only when the config trusts the server or vouches for the tool',
    async () => {
      const plain = await listed(controlled('ctl'));
      // No annotations: may destroy, not idempotent, open world.
      expect(metadata(plain.get('ctl_sleep'))).toEqual(UNTRUSTED);
      // A claim of read-only from a server nobody vouched for changes nothing.
      expect(metadata(plain.get('ctl_pid'))).toEqual(UNTRUSTED);

      const trusted = await listed({ ...controlled('ctl'), trustAnnotations: true });
      expect(metadata(trusted.get('ctl_pid'))).toEqual({ permissions: ['mcp', 'mcp:ctl', 'mcp:read', 'mcp:open-world'], sideEffects: false, idempotent: true });
      // Trusting the server's annotations does not invent ones it did not send.
      expect(metadata(trusted.get('ctl_sleep'))).toEqual(UNTRUSTED);

      const vouched = await listed({ ...controlled('ctl'), readOnlyTools: ['sl*'], idempotentTools: ['grow'] });
      expect(metadata(vouched.get('ctl_sleep'))).toEqual({ permissions: ['mcp', 'mcp:ctl', 'mcp:read', 'mcp:open-world'], sideEffects: false, idempotent: true });
      expect(metadata(vouched.get('ctl_grow'))).toEqual({ ...UNTRUSTED, idempotent: true });
      expect(metadata(vouched.get('ctl_pid'))).toEqual(UNTRUSTED);
    },
    SLOW,
  );

  it(
    'of a trusted server keep a tool that writes without destroying a side effect, and closed-world tools out of mcp:open-world',
    async () => {
      const files = await listed({ name: 'files', command: process.execPath, args: [filesystemJs, tempDir()], trustAnnotations: true });
      // create_directory: readOnlyHint false, destructiveHint false, idempotentHint true, openWorldHint false.
      expect(metadata(files.get('files_create_directory'))).toEqual({ permissions: ['mcp', 'mcp:files'], sideEffects: true, idempotent: true });
      expect(metadata(files.get('files_move_file'))).toEqual({ permissions: ['mcp', 'mcp:files', 'mcp:destructive'], sideEffects: true, idempotent: false });
    },
    SLOW,
  );

  it('are checked in the server config: a list of tool-name globs, a boolean', () => {
    expect(() => checkMcpServerConfig({ ...controlled('ctl'), readOnlyTools: 'sleep' })).toThrow(/readOnlyTools/);
    expect(() => checkMcpServerConfig({ ...controlled('ctl'), trustAnnotations: 'yes' })).toThrow(/trustAnnotations/);
    expect(checkMcpServerConfig({ name: 'h', url: 'http://127.0.0.1:1/mcp', idempotentTools: ['get_*'] })).toMatchObject({ idempotentTools: ['get_*'] });
  });

  it(
    'let a gate that denies mcp:destructive deny a tool without annotations',
    async () => {
      const model = scriptedModel([{ toolCalls: [{ id: 's1', name: 'ctl_sleep', arguments: { ms: 0 } }] }, { text: 'denied' }]);
      const agent = createAgent({ model, mcpServers: [controlled('ctl')], policy: { gate: gates.rules({ permissions: { deny: ['mcp:destructive'] } }) } });
      try {
        const run = agent.start('sleep');
        await run.result;
        const seen = events(agent.journal.entries(run.runId));
        expect(seen).toContainEqual(expect.objectContaining({ type: 'policy.evaluated', tool: 'ctl_sleep', decision: 'deny' }));
        expect(seen.some((event) => event.type === 'tool.started')).toBe(false);
      } finally {
        await agent.close();
      }
    },
    SLOW,
  );

  it(
    'hold back a tool without annotations, or one whose read-only claim nobody vouched for, once the run read MCP output',
    async () => {
      const script = () =>
        scriptedModel([
          { toolCalls: [{ id: 'p1', name: 'ctl_sleep', arguments: { ms: 0 } }] },
          { toolCalls: [{ id: 'p2', name: 'ctl_sleep', arguments: { ms: 0 } }, { id: 'p3', name: 'ctl_pid', arguments: {} }] },
          { text: 'slept twice' },
        ]);
      const held = createAgent({ model: script(), mcpServers: [controlled('ctl')], policy: { taint: { onSideEffect: 'deny' } } });
      try {
        const run = held.start('sleep twice');
        await run.result;
        const decisions = events(held.journal.entries(run.runId)).flatMap((event) => (event.type === 'policy.evaluated' ? [[event.toolCallId, event.decision]] : []));
        // The first call comes before any untrusted content; after its result, both are held.
        expect(decisions).toEqual([
          ['p1', 'allow'],
          ['p2', 'deny'],
          ['p3', 'deny'],
        ]);
      } finally {
        await held.close();
      }

      const model = script();
      const vouched = createAgent({ model, mcpServers: [{ ...controlled('ctl'), readOnlyTools: ['sleep'], trustAnnotations: true }], policy: { taint: { onSideEffect: 'deny' } } });
      try {
        const run = vouched.start('sleep twice');
        expect((await run.result).text).toBe('slept twice');
        expect(toolResults(model.calls[2]).map((result) => result.name)).toEqual(['ctl_sleep', 'ctl_sleep', 'ctl_pid']);
        expect(toolResults(model.calls[2])[1]?.content).toBe('slept 0 ms');
      } finally {
        await vouched.close();
      }
    },
    SLOW,
  );

  /** A run of `config` cut right after `ctl_pid`'s call started, as a crash leaves it; resumed by a new agent. */
  async function resumedAfterCrash(config: McpServerConfig): Promise<{ run: AgentRun; close: () => Promise<void> }> {
    const runId = 'run_pid';
    const reference = createFileStore({ dir: tempDir() });
    const first = createAgent({ model: scriptedModel([{ toolCalls: [{ id: 'p1', name: 'ctl_pid', arguments: {} }] }, { text: 'done' }]), mcpServers: [config], persistence: { store: reference } });
    try {
      await first.start('pid', { runId }).settled;
    } finally {
      await first.close();
    }
    const lines = readFileSync(runFiles(reference, runId).log, 'utf8').split(/(?<=\n)/);
    const cutAt = lines.findIndex((line) => line.includes('"kind":"call.started"')) + 1;
    expect(cutAt).toBeGreaterThan(0);
    const store = createFileStore({ dir: tempDir() });
    const target = runFiles(store, runId);
    mkdirSync(target.runs, { recursive: true });
    writeFileSync(target.log, lines.slice(0, cutAt).join(''));
    const header = readRunHeader(target.log);
    if (header === null) throw new Error('the run has no header');
    writeFileSync(target.meta, JSON.stringify({ v: META_VERSION, runId, agentId: header.agentId, task: header.task, status: 'running', createdAt: header.createdAt, updatedAt: header.createdAt }));
    const agent = createAgent({ id: header.agentId, model: scriptedModel([{ text: 'done' }]), mcpServers: [config], persistence: { store } });
    return { run: agent.resume(runId), close: () => agent.close() };
  }

  it(
    'keep a resume from making again a call interrupted mid-way whose read-only claim nobody vouched for',
    async () => {
      const untrusted = await resumedAfterCrash(controlled('ctl'));
      try {
        const first = await Promise.race([humanAwaited(untrusted.run).then(() => 'waits for a human'), untrusted.run.settled.then(() => 'ended')]);
        expect(first).toBe('waits for a human');
        expect(untrusted.run.phase()).toBe('awaitingHuman');
        const seen: LoopEvent[] = [];
        untrusted.run.events$.subscribe((entry) => seen.push(entry.event)).unsubscribe();
        const afterResume = seen.slice(seen.findIndex((event) => event.type === 'run.resumed'));
        expect(afterResume).toContainEqual(expect.objectContaining({ type: 'human.awaiting', kind: 'escalation' }));
        expect(afterResume.some((event) => event.type === 'tool.started')).toBe(false);
        untrusted.run.reject('not again');
        await untrusted.run.result;
      } finally {
        await untrusted.close();
      }

      const trusted = await resumedAfterCrash({ ...controlled('ctl'), trustAnnotations: true });
      try {
        const result = await trusted.run.result;
        expect(result.text).toBe('done');
        const made = result.messages.filter((message) => message.role === 'tool');
        expect(made).toHaveLength(1);
        expect(String(made[0]?.content)).toMatch(/\n\d+\n/);
      } finally {
        await trusted.close();
      }
    },
    SLOW * 2,
  );
});
