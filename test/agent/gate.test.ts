/**
 * The gate phase through `createAgent`: what the policy gate decides is what runs, and every
 * refusal reaches the model in its next request.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from 'xstate';
import { z } from 'zod';
import type { AgentRun } from '../../src/agent/createAgent.ts';
import type { JournalEntry, LoopEventOf } from '../../src/core/loopEvent.ts';
import { gates } from '../../src/policy/gates.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { trackAgent as agentWith, stopTrackedAgents, toolMessages } from '../support/agents.ts';

afterEach(stopTrackedAgents);

function policyEvents(entries: readonly JournalEntry[]): LoopEventOf<'policy.evaluated'>[] {
  return entries.map((e) => e.event).filter((e): e is LoopEventOf<'policy.evaluated'> => e.type === 'policy.evaluated');
}

/** A file tool that records what it was asked to do. */
function fileTools(calls: Array<{ tool: string; path: string }>, options: { confirmWrites?: boolean } = {}) {
  const input = z.object({ path: z.string() });
  const read = defineTool({
    name: 'read_file',
    description: 'Read a file',
    input,
    permissions: ['fs.read'],
    execute: ({ path }) => {
      calls.push({ tool: 'read_file', path });
      return `contents of ${path}`;
    },
  });
  const write = defineTool({
    name: 'write_file',
    description: 'Write a file',
    input,
    permissions: ['fs.write'],
    requiresConfirmation: options.confirmWrites === true,
    execute: ({ path }) => {
      calls.push({ tool: 'write_file', path });
      return `wrote ${path}`;
    },
  });
  const fetchUrl = defineTool({
    name: 'fetch_url',
    description: 'Fetch a URL',
    input: z.object({ path: z.string() }),
    permissions: ['net.fetch'],
    execute: ({ path }) => {
      calls.push({ tool: 'fetch_url', path });
      return 'page';
    },
  });
  const shell = defineTool({
    name: 'shell_exec',
    description: 'Run a shell command',
    input,
    execute: ({ path }) => {
      calls.push({ tool: 'shell_exec', path });
      return 'ran';
    },
  });
  return { read, write, fetchUrl, shell };
}

async function awaitingHuman(run: AgentRun): Promise<void> {
  await waitFor(run.actor, (s) => s.matches({ running: 'awaitingHuman' }), { timeout: 2_000 });
}

describe('gate phase through createAgent', () => {
  it('allows a call: the tool runs with the model arguments and its result reaches the next request', async () => {
    const calls: Array<{ tool: string; path: string }> = [];
    const { read } = fileTools(calls);
    const model = scriptedModel([{ toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'a.txt' } }] }, { text: 'done' }]);
    const agent = agentWith({ model, tools: [read], policy: { gate: gates.fromFunction('open', () => ({ kind: 'allow' })) } });
    const result = await agent.run('read a.txt');
    expect(result.text).toBe('done');
    expect(calls).toEqual([{ tool: 'read_file', path: 'a.txt' }]);
    expect(toolMessages(model.calls[1]?.messages ?? [])).toEqual([
      { role: 'tool', toolCallId: 'c1', name: 'read_file', content: 'contents of a.txt' },
    ]);
    expect(policyEvents(agent.journal.entries(result.runId))).toEqual([
      { type: 'policy.evaluated', toolCallId: 'c1', tool: 'read_file', decision: 'allow' },
    ]);
  });

  it('denies a call: the tool never runs and the model sees the reason in its next request', async () => {
    const calls: Array<{ tool: string; path: string }> = [];
    const { write, read } = fileTools(calls);
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'w1', name: 'write_file', arguments: { path: 'x' } },
          { id: 'r1', name: 'read_file', arguments: { path: 'y' } },
        ],
      },
      { text: 'ok, I will not write' },
    ]);
    const gate = gates.fromFunction('frozen', (action) =>
      action.tool === 'write_file' ? { kind: 'deny', reason: 'writes are frozen today' } : { kind: 'allow' },
    );
    const agent = agentWith({ model, tools: [write, read], policy: { gate } });
    const result = await agent.run('write x, read y');
    expect(calls).toEqual([{ tool: 'read_file', path: 'y' }]);
    expect(model.calls).toHaveLength(2);
    const seen = toolMessages(model.calls[1]?.messages ?? []);
    expect(seen.map((m) => m.toolCallId)).toEqual(['w1', 'r1']);
    expect(seen[0]).toMatchObject({ content: 'Denied by policy: writes are frozen today', isError: true });
    expect(seen[1]).toMatchObject({ content: 'contents of y' });
    expect(seen[1]?.isError).toBeUndefined();
    expect(policyEvents(agent.journal.entries(result.runId)).map((e) => [e.toolCallId, e.decision, e.reason])).toEqual([
      ['w1', 'deny', 'writes are frozen today'],
      ['r1', 'allow', undefined],
    ]);
  });

  it('modifies a call: the tool executes with the modified arguments, not the proposed ones', async () => {
    const received: unknown[] = [];
    const write = defineTool({
      name: 'write_file',
      description: 'Write a file',
      input: z.object({ path: z.string(), content: z.string() }),
      execute: (args) => {
        received.push(args);
        return 'written';
      },
    });
    const model = scriptedModel([
      { toolCalls: [{ id: 'm1', name: 'write_file', arguments: { path: '/etc/passwd', content: 'x' } }] },
      { text: 'written' },
    ]);
    const gate = gates.fromFunction('sandbox', (action) => ({
      kind: 'modify',
      arguments: { ...(action.arguments as { content: string }), path: '/sandbox/passwd' },
      reason: 'writes are redirected to /sandbox',
    }));
    const agent = agentWith({ model, tools: [write], policy: { gate } });
    const result = await agent.run('write it');
    expect(received).toEqual([{ path: '/sandbox/passwd', content: 'x' }]);
    expect(toolMessages(model.calls[1]?.messages ?? [])[0]).toMatchObject({ toolCallId: 'm1', content: 'written' });
    expect(policyEvents(agent.journal.entries(result.runId))).toEqual([
      { type: 'policy.evaluated', toolCallId: 'm1', tool: 'write_file', decision: 'modify', reason: 'writes are redirected to /sandbox' },
    ]);
  });

  it('denies a modification the tool schema does not accept, without running the tool', async () => {
    let executed = 0;
    const tool = defineTool({
      name: 'count',
      description: 'Count',
      input: z.object({ n: z.number() }),
      execute: () => ++executed,
    });
    const model = scriptedModel([{ toolCalls: [{ id: 'b1', name: 'count', arguments: { n: 1 } }] }, { text: 'fine' }]);
    const gate = gates.fromFunction('broken-rewrite', () => ({ kind: 'modify', arguments: { n: 'one' }, reason: 'stringify' }));
    await agentWith({ model, tools: [tool], policy: { gate } }).run('count');
    expect(executed).toBe(0);
    expect(toolMessages(model.calls[1]?.messages ?? [])[0]?.content).toMatch(/^Denied by policy: the gate's modification \(stringify\)/);
  });

  it('routes a requiresConfirmation tool to awaitingHuman; approve() runs it', async () => {
    const calls: Array<{ tool: string; path: string }> = [];
    const { write } = fileTools(calls, { confirmWrites: true });
    const model = scriptedModel([{ toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'notes.md' } }] }, { text: 'saved' }]);
    const agent = agentWith({ model, tools: [write] });
    const run = agent.start('save notes');
    const awaiting: JournalEntry[] = [];
    run.events$.subscribe((e) => {
      if (e.event.type === 'human.awaiting') awaiting.push(e);
    });
    await awaitingHuman(run);
    expect(run.phase()).toBe('awaitingHuman');
    expect(calls).toEqual([]);
    expect(awaiting.map((e) => e.event)).toEqual([
      { type: 'human.awaiting', kind: 'confirmation', toolCallIds: ['w1'], reasons: [{ toolCallId: 'w1', reason: 'Waiting for human confirmation.' }] },
    ]);
    run.approve();
    const result = await run.result;
    expect(result.text).toBe('saved');
    expect(calls).toEqual([{ tool: 'write_file', path: 'notes.md' }]);
    expect(toolMessages(model.calls[1]?.messages ?? [])[0]).toMatchObject({ toolCallId: 'w1', content: 'wrote notes.md' });
    expect(run.phase()).toBe('done');
  });

  it("reject('reason') feeds the rejection back to the model and the tool never runs", async () => {
    const calls: Array<{ tool: string; path: string }> = [];
    const { write } = fileTools(calls, { confirmWrites: true });
    const model = scriptedModel([{ toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'prod.db' } }] }, { text: 'understood' }]);
    const agent = agentWith({ model, tools: [write] });
    const run = agent.start('overwrite prod.db');
    await awaitingHuman(run);
    run.reject('production is off limits');
    const result = await run.result;
    expect(result.text).toBe('understood');
    expect(calls).toEqual([]);
    const rejection = toolMessages(model.calls[1]?.messages ?? [])[0];
    expect(rejection).toMatchObject({ toolCallId: 'w1', isError: true });
    expect(rejection?.content).toContain('production is off limits');
    expect(agent.journal.entries(result.runId).map((e) => e.event)).toContainEqual({
      type: 'human.decided',
      decision: 'reject',
      toolCallIds: ['w1'],
      reason: 'production is off limits',
    });
  });

  it('approves and rejects individual calls by id when several wait for a human', async () => {
    const calls: Array<{ tool: string; path: string }> = [];
    const { write } = fileTools(calls, { confirmWrites: true });
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'a', name: 'write_file', arguments: { path: 'keep' } },
          { id: 'b', name: 'write_file', arguments: { path: 'drop' } },
        ],
      },
      { text: 'partly done' },
    ]);
    const run = agentWith({ model, tools: [write] }).start('two writes');
    await awaitingHuman(run);
    run.reject('not this one', ['b']);
    await awaitingHuman(run);
    run.approve(['a']);
    await run.result;
    expect(calls).toEqual([{ tool: 'write_file', path: 'keep' }]);
    const seen = toolMessages(model.calls[1]?.messages ?? []);
    expect(seen.map((m) => [m.toolCallId, m.isError === true])).toEqual([
      ['a', false],
      ['b', true],
    ]);
  });

  it("routes a gate's confirm to awaitingHuman like requiresConfirmation, with the gate's reason; approve() runs it", async () => {
    const calls: Array<{ tool: string; path: string }> = [];
    const { write } = fileTools(calls);
    const model = scriptedModel([{ toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'notes.md' } }] }, { text: 'saved' }]);
    const gate = gates.fromFunction('ask-writes', (action) => (action.tool === 'write_file' ? { kind: 'confirm', reason: 'Writes need a human today.' } : { kind: 'allow' }));
    const agent = agentWith({ model, tools: [write], policy: { gate } });
    const run = agent.start('save notes');
    await awaitingHuman(run);
    expect(calls).toEqual([]);
    const waiting = agent.journal.entries(run.runId).map((e) => e.event);
    expect(waiting).toContainEqual({ type: 'policy.evaluated', toolCallId: 'w1', tool: 'write_file', decision: 'confirm', reason: 'Writes need a human today.' });
    expect(waiting).toContainEqual({
      type: 'human.awaiting',
      kind: 'confirmation',
      toolCallIds: ['w1'],
      reasons: [{ toolCallId: 'w1', reason: 'Writes need a human today.' }],
    });
    run.approve();
    const result = await run.result;
    expect(result.text).toBe('saved');
    expect(calls).toEqual([{ tool: 'write_file', path: 'notes.md' }]);
    expect(toolMessages(model.calls[1]?.messages ?? [])[0]).toMatchObject({ toolCallId: 'w1', content: 'wrote notes.md' });
  });

  it("rejecting a gate's confirm feeds the rejection back to the model and the tool never runs", async () => {
    const calls: Array<{ tool: string; path: string }> = [];
    const { write } = fileTools(calls);
    const model = scriptedModel([{ toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'prod.db' } }] }, { text: 'understood' }]);
    const gate = gates.rules({ confirm: ['write_*'] });
    const run = agentWith({ model, tools: [write], policy: { gate } }).start('overwrite prod.db');
    await awaitingHuman(run);
    run.reject('production is off limits');
    const result = await run.result;
    expect(result.text).toBe('understood');
    expect(calls).toEqual([]);
    const rejection = toolMessages(model.calls[1]?.messages ?? [])[0];
    expect(rejection).toMatchObject({ toolCallId: 'w1', isError: true });
    expect(rejection?.content).toContain('production is off limits');
  });

  it('runs the arguments a composed gate modified once its confirm is approved, and denies ones the tool does not accept', async () => {
    const calls: Array<{ tool: string; path: string }> = [];
    const { write } = fileTools(calls);
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'w1', name: 'write_file', arguments: { path: 'etc/hosts' } },
          { id: 'w2', name: 'write_file', arguments: { path: 'broken' } },
        ],
      },
      { text: 'done' },
    ]);
    const sandbox = gates.fromFunction('sandbox', (action) => {
      const { path } = action.arguments as { path: string };
      return { kind: 'modify', arguments: { path: path === 'broken' ? 42 : `/sandbox/${path}` }, reason: 'writes go to /sandbox' };
    });
    const gate = gates.compose(sandbox, gates.rules({ confirm: ['write_*'] }));
    const agent = agentWith({ model, tools: [write], policy: { gate } });
    const run = agent.start('write');
    await awaitingHuman(run);
    run.approve();
    await run.result;
    expect(calls).toEqual([{ tool: 'write_file', path: '/sandbox/etc/hosts' }]);
    const seen = toolMessages(model.calls[1]?.messages ?? []);
    expect(seen[1]).toMatchObject({ toolCallId: 'w2', isError: true });
    expect(seen[1]?.content).toMatch(/^Denied by policy: the gate's modification \(.*\) produced arguments the tool does not accept/);
    expect(policyEvents(agent.journal.entries(run.runId)).map((e) => [e.toolCallId, e.decision])).toEqual([
      ['w1', 'confirm'],
      ['w2', 'deny'],
    ]);
  });

  describe('gates.rules', () => {
    function everyToolOnce() {
      return scriptedModel([
        {
          toolCalls: [
            { id: 'r', name: 'read_file', arguments: { path: 'p' } },
            { id: 'w', name: 'write_file', arguments: { path: 'p' } },
            { id: 'f', name: 'fetch_url', arguments: { path: 'p' } },
            { id: 's', name: 'shell_exec', arguments: { path: 'p' } },
          ],
        },
        { text: 'done' },
      ]);
    }

    it('applies allow/deny tool globs and permission globs, deny winning over allow', async () => {
      const calls: Array<{ tool: string; path: string }> = [];
      const { read, write, fetchUrl, shell } = fileTools(calls);
      const model = everyToolOnce();
      const gate = gates.rules({ allow: ['read_*', 'write_*', 'fetch_*'], deny: ['write_*'], permissions: { deny: ['net.*'] } });
      await agentWith({ model, tools: [read, write, fetchUrl, shell], policy: { gate } }).run('do everything');
      expect(calls.map((c) => c.tool)).toEqual(['read_file']);
      const seen = toolMessages(model.calls[1]?.messages ?? []);
      expect(seen.map((m) => m.toolCallId)).toEqual(['r', 'w', 'f', 's']);
      expect(seen[0]?.isError).toBeUndefined();
      expect(seen[1]?.content).toContain('denied by policy rule deny: "write_*"');
      expect(seen[2]?.content).toContain('permission "net.fetch", denied by policy rule permissions.deny: "net.*"');
      expect(seen[3]?.content).toContain('is not on the allow list');
      expect(seen.slice(1).every((m) => m.isError === true && m.content.startsWith('Denied by policy: '))).toBe(true);
    });

    it('denies tools whose permissions permissions.allow does not grant, and allows tools without permissions', async () => {
      const calls: Array<{ tool: string; path: string }> = [];
      const { read, write, fetchUrl, shell } = fileTools(calls);
      const model = everyToolOnce();
      const gate = gates.rules({ permissions: { allow: ['fs.read'] } });
      await agentWith({ model, tools: [read, write, fetchUrl, shell], policy: { gate } }).run('do everything');
      expect(calls.map((c) => c.tool)).toEqual(['read_file', 'shell_exec']);
      const seen = toolMessages(model.calls[1]?.messages ?? []);
      expect(seen[1]?.content).toContain('needs permission "fs.write", which no policy rule in permissions.allow grants');
      expect(seen[2]?.content).toContain('needs permission "net.fetch"');
    });
  });
});
