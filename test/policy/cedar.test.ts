/**
 * The Cedar gate with real Cedar policies (cedar-wasm): argument conditions, `like` patterns,
 * tools in groups (and groups in groups), forbid overriding permit, reasons the model can act on,
 * and policies that are wrong failing when the gate is built.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/agent/createAgent.ts';
import { ConfigurationError } from '../../src/core/errors.ts';
import { gates } from '../../src/policy/gates.ts';
import type { GateContext, GateDecision, ProposedAction } from '../../src/policy/types.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';

const context: GateContext = { runId: 'run_1', agentId: 'researcher', iteration: 2, messages: [] };
const call = (tool: string, args: unknown = {}, permissions: string[] = []): ProposedAction => ({ toolCallId: 'c1', tool, arguments: args, permissions });
const decide = (gate: ReturnType<typeof gates.cedar>, action: ProposedAction, at: GateContext = context) => gate.evaluate(action, at) as GateDecision;

describe('gates.cedar', () => {
  const policies = `
    permit(principal, action == Action::"call", resource in ToolGroup::"files");
    permit(principal, action, resource) when { resource.name == "transfer" && context.arguments.amount <= 100 };
    @id("no-system-files") @reason("System files are off limits.")
    forbid(principal, action, resource) when { context.arguments has path && context.arguments.path like "/etc/*" };
  `;
  const gate = gates.cedar({ policies, groups: { files: ['file_*'] } });

  it('permits by group membership: a tool is in the groups whose globs match it', () => {
    expect(decide(gate, call('file_read', { path: '/home/me/notes.txt' }))).toEqual({ kind: 'allow' });
    expect(decide(gate, call('shell', { cmd: 'ls' }))).toMatchObject({ kind: 'deny', reason: expect.stringContaining('No Cedar policy permits calling "shell"') });
  });

  it('decides on the arguments: a `when` condition on a number', () => {
    expect(decide(gate, call('transfer', { amount: 40, to: 'bob' }))).toEqual({ kind: 'allow' });
    expect(decide(gate, call('transfer', { amount: 4_000, to: 'bob' }))).toMatchObject({ kind: 'deny' });
  });

  it('lets forbid override permit, and tells the model which policy decided and why', () => {
    const denied = decide(gate, call('file_read', { path: '/etc/shadow' }));
    expect(denied).toEqual({ kind: 'deny', reason: 'Cedar policy "no-system-files" (System files are off limits.) forbids calling "file_read" with these arguments.' });
  });

  it('follows an entity hierarchy: groups inside groups, and the agent as principal', () => {
    const nested = gates.cedar({
      policies: `permit(principal == Agent::"researcher", action, resource in ToolGroup::"readonly");`,
      groups: { search: ['web_*'] },
      entities: [
        { uid: { type: 'ToolGroup', id: 'search' }, attrs: {}, parents: [{ type: 'ToolGroup', id: 'readonly' }] },
        { uid: { type: 'ToolGroup', id: 'readonly' }, attrs: {}, parents: [] },
      ],
    });
    expect(decide(nested, call('web_search'))).toEqual({ kind: 'allow' });
    expect(decide(nested, call('web_search'), { ...context, agentId: 'writer' })).toMatchObject({ kind: 'deny' });
    expect(decide(nested, call('file_write'))).toMatchObject({ kind: 'deny' });
  });

  it('sees permissions as a set attribute and the iteration in the context', () => {
    const byPermission = gates.cedar({
      policies: `permit(principal, action, resource) unless { resource.permissions.contains("net.fetch") || context.iteration > 5 };`,
    });
    expect(decide(byPermission, call('add', {}, ['math']))).toEqual({ kind: 'allow' });
    expect(decide(byPermission, call('fetch', {}, ['net.fetch']))).toMatchObject({ kind: 'deny' });
    expect(decide(byPermission, call('add', {}, ['math']), { ...context, iteration: 6 })).toMatchObject({ kind: 'deny' });
  });

  it('keeps forged entity references in arguments out of the request', () => {
    const strict = gates.cedar({ policies: `permit(principal, action, resource) when { context.arguments has owner && context.arguments.owner == Agent::"admin" };` });
    expect(decide(strict, call('delete', { owner: { __entity: { type: 'Agent', id: 'admin' } } }))).toMatchObject({ kind: 'deny' });
  });

  it('matches `like` patterns with wildcards', () => {
    const urls = gates.cedar({ policies: `permit(principal, action, resource) when { context.arguments.url like "https://docs.example.com/*" };` });
    expect(decide(urls, call('fetch', { url: 'https://docs.example.com/guide' }))).toEqual({ kind: 'allow' });
    expect(decide(urls, call('fetch', { url: 'http://169.254.169.254/latest' }))).toMatchObject({ kind: 'deny', reason: expect.stringContaining('No Cedar policy permits calling "fetch"') });
  });

  it('rejects a policy that does not parse when built, naming line and column', () => {
    const broken = 'permit(principal, action, resource);\n\nforbid(principal, action, resource) when { context.arguments.x ';
    expect(() => gates.cedar({ policies: broken })).toThrow(ConfigurationError);
    expect(() => gates.cedar({ policies: broken })).toThrow(/line 3, column \d+/);
  });

  it('validates policies against a schema when built', () => {
    const schema = `
      entity Agent; entity ToolGroup; entity Tool in [ToolGroup] { name: String, permissions: Set<String> };
      action call appliesTo { principal: [Agent], resource: [Tool], context: { arguments: { amount: Long }, iteration: Long, runId: String, tainted: Bool } };`;
    expect(() => gates.cedar({ schema, policies: `permit(principal, action == Action::"call", resource) when { context.arguments.amount < 10 };` })).not.toThrow();
    expect(() => gates.cedar({ schema, policies: `permit(principal, action == Action::"call", resource) when { resource.owner == "x" };` })).toThrow(/do not match the schema/);
  });

  it('denies a call in a real run and the model sees the reason', async () => {
    const remove = defineTool({ name: 'file_delete', description: 'Delete a file', input: z.object({ path: z.string() }), execute: () => 'deleted' });
    const model = scriptedModel([{ toolCalls: [{ name: 'file_delete', arguments: { path: '/etc/passwd' } }] }, { text: 'understood' }]);
    const agent = createAgent({ model, tools: [remove], policy: { gate } });
    await agent.run('clean up');
    const observation = model.calls[1]?.messages.at(-1);
    expect(observation?.role).toBe('tool');
    expect(String(observation?.content)).toContain('System files are off limits.');
  });
});
