/**
 * The Cedar gate with real Cedar policies (cedar-wasm): argument conditions, `like` patterns,
 * tools in groups (and groups in groups), forbid overriding permit, reasons the model can act on,
 * policies that are wrong failing when the gate is built, and tools called often decided by their
 * own smaller policy sets exactly as by all the policies.
 */
import type * as Cedar from '@cedar-policy/cedar-wasm/nodejs';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/agent/createAgent.ts';
import { ConfigurationError } from '../../src/core/errors.ts';
import { gates } from '../../src/policy/gates.ts';
import type { GateContext, GateDecision, ProposedAction } from '../../src/policy/types.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';

// Records the policy sets the gate prepares (id → how many policies) and the set each decision used.
const sets = vi.hoisted(() => ({ sizes: new Map<string, number>(), used: [] as string[] }));
vi.mock('@cedar-policy/cedar-wasm/nodejs', async (importOriginal) => {
  const cedar = await importOriginal<typeof Cedar>();
  return {
    ...cedar,
    preparsePolicySet: ((id, policies) => {
      const given = policies.staticPolicies;
      sets.sizes.set(id, typeof given === 'object' ? Object.keys(given).length : -1);
      return cedar.preparsePolicySet(id, policies);
    }) as typeof cedar.preparsePolicySet,
    statefulIsAuthorized: ((call) => {
      sets.used.push(call.preparsedPolicySetId);
      return cedar.statefulIsAuthorized(call);
    }) as typeof cedar.statefulIsAuthorized,
  };
});

// More calls than it takes a tool to be decided by a policy set of its own.
const often = 50;

const context: GateContext = { runId: 'run_1', agentId: 'researcher', iteration: 2, messages: [] };
const call = (tool: string, args: unknown = {}, permissions: string[] = []): ProposedAction => ({ toolCallId: 'c1', tool, arguments: args, permissions });
const decide = (gate: ReturnType<typeof gates.cedar>, action: ProposedAction, at: GateContext = context) => gate.evaluate(action, at) as GateDecision;
// Cedar lists the deciding and the failing policies in no fixed order, not even from call to call.
const unordered = (decision: GateDecision) =>
  decision.kind === 'deny' ? { kind: 'deny', parts: decision.reason.replace(/\.$/, '').split(/(?<=\.) |; |, (?=")/).sort() } : decision;

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

  it('denies when a forbid cannot be evaluated for the arguments, so a fraction or a huge number does not switch it off', () => {
    const capped = gates.cedar({
      policies: `
        permit(principal, action, resource);
        @id("cap") forbid(principal, action, resource) when { context.arguments has amount && context.arguments.amount > 100 };`,
    });
    expect(decide(capped, call('transfer', { amount: 40 }))).toEqual({ kind: 'allow' });
    for (const amount of [4_000.5, 1e20]) {
      expect(decide(capped, call('transfer', { amount }))).toMatchObject({ kind: 'deny', reason: expect.stringContaining('"cap" could not be evaluated') });
    }
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

  it('decides each call on its own permissions, agent and arguments, however often the tool is called', () => {
    const hot = gates.cedar({
      policies: `
        permit(principal == Agent::"researcher", action, resource) when { resource.name == "fetch" && !resource.permissions.contains("net.write") };
        @id("big") forbid(principal, action, resource) when { context.arguments has size && context.arguments.size > 10 };
        permit(principal, action, resource in ToolGroup::"files");`,
      groups: { files: ['file_*'] },
    });
    for (let i = 0; i < often; i++) {
      const write = i % 2 === 0;
      const size = i % 3 === 0 ? 50 : 5;
      const agentId = i % 5 === 0 ? 'writer' : 'researcher';
      const fetched = decide(hot, call('fetch', { size }, write ? ['net.write'] : ['net.read']), { ...context, agentId });
      expect(fetched.kind).toBe(!write && size <= 10 && agentId === 'researcher' ? 'allow' : 'deny');
      expect(decide(hot, call('file_read', { size }, write ? ['net.write'] : [])).kind).toBe(size <= 10 ? 'allow' : 'deny');
    }
    // The agent's own entity goes with each call: an undeclared one exists, without attributes.
    const byRole = gates.cedar({
      policies: `permit(principal, action, resource) when { principal.role == "admin" };`,
      entities: [{ uid: { type: 'Agent', id: 'boss' }, attrs: { role: 'admin' }, parents: [] }],
    });
    for (let i = 0; i < often; i++) {
      expect(decide(byRole, call('x'), { ...context, agentId: 'boss' })).toEqual({ kind: 'allow' });
      expect(decide(byRole, call('x'), { ...context, agentId: 'intern' })).toMatchObject({ kind: 'deny', reason: expect.stringContaining('does not have the attribute `role`') });
    }
  });

  it('decides a tool called often by the policies that can apply to it, exactly as by all of them', () => {
    const options = {
      policies: `
        permit(principal, action == Action::"call", resource in ToolGroup::"files");
        permit(principal, action, resource in ToolGroup::"readonly");
        permit(principal, action, resource == Tool::"calc");
        permit(principal, action, resource is Tool in ToolGroup::"search") when { context.arguments has q };
        permit(principal, action == Action::"other", resource);
        permit(principal, action, resource) when { resource.name == "transfer" && context.arguments.amount <= 100 };
        permit(principal, action, resource) when { "pay" == resource.name && context.arguments.amount <= 5 && context.arguments.amount > 0 };
        @id("checks-n") permit(principal, action, resource) unless { resource.name == "x" } when { context.arguments.n > 1 };
        @id("no-etc") @reason("System files are off limits.")
        forbid(principal, action, resource in ToolGroup::"files") when { context.arguments has path && context.arguments.path like "/etc/*" };
        @id("no-mallory") forbid(principal, action, resource) when { resource.name == "transfer" && context.arguments.to == "mallory" };
        @id("no-bad-q") forbid(principal, action, resource is Tool in ToolGroup::"search") when { context.arguments has q && context.arguments.q == "bad" };`,
      groups: { files: ['file_*'], search: ['web_*'] },
      entities: [
        { uid: { type: 'ToolGroup', id: 'search' }, attrs: {}, parents: [{ type: 'ToolGroup', id: 'readonly' }] },
        { uid: { type: 'ToolGroup', id: 'readonly' }, attrs: {}, parents: [] },
      ],
    };
    const tools = ['file_read', 'file_write', 'web_search', 'calc', 'transfer', 'pay', 'shell', 'x'];
    const cases = [{}, { path: '/etc/passwd' }, { path: '/home/a' }, { amount: 50, to: 'bob' }, { amount: 3, to: 'mallory' }, { q: 'w', n: 2 }, { q: 'bad' }];
    // A fresh gate decides each tool's few calls by all the policies.
    const cold = gates.cedar(options);
    const expected = tools.map((tool) => cases.map((args) => unordered(decide(cold, call(tool, args)))));
    const hot = gates.cedar(options);
    sets.sizes.clear();
    for (let round = 0; round < 3; round++) {
      for (const tool of tools) for (let i = 0; i < often; i++) decide(hot, call(tool, { n: 0 }));
      tools.forEach((tool, t) => cases.forEach((args, c) => expect(unordered(decide(hot, call(tool, args)))).toEqual(expected[t]?.[c])));
    }
    // The hot tools were decided by smaller sets: a tool in no group, named by no policy, by the two
    // policies that do not say which tools they are for.
    expect([...sets.sizes.values()].every((size) => size < 11)).toBe(true);
    decide(hot, call('shell'));
    expect(sets.sizes.get(sets.used.at(-1) ?? '')).toBe(2);
  });

  it('keeps deciding right when more tools are called often than it keeps policy sets for', () => {
    const names = Array.from({ length: 40 }, (_, i) => `t${i}`);
    const many = gates.cedar({ policies: names.map((name) => `permit(principal, action, resource) when { resource.name == "${name}" && context.arguments.ok };`).join('\n') });
    const check = (name: string, i: number) => {
      const own = decide(many, call(name, { ok: i % 2 === 0 }));
      expect(own.kind).toBe(i % 2 === 0 ? 'allow' : 'deny');
    };
    for (const name of names) for (let i = 0; i < often; i++) check(name, i);
    // The last tools take over the slots of sets left unused; the first ones then come back.
    for (let i = 0; i < 1_200; i++) check(names[32 + (i % 8)] ?? '', i);
    for (const name of names) for (let i = 0; i < often; i++) check(name, i);
    expect(sets.sizes.get(sets.used.at(-1) ?? '')).toBe(1);
  });

  describe('@confirm', () => {
    const asking = gates.cedar({
      groups: { files: ['file_*'] },
      policies: `
        permit(principal, action, resource in ToolGroup::"files");
        permit(principal, action, resource == Tool::"calc");
        @id("ask-prod") @confirm("Writing under /prod needs a human.")
        forbid(principal, action, resource == Tool::"file_write") when { context.arguments.path like "/prod/*" };
        @id("ask-big") @confirm("A large write needs a human.")
        forbid(principal, action, resource == Tool::"file_write") when { context.arguments has size && context.arguments.size > 1000 };
        @id("no-etc") @reason("System files are off limits.")
        forbid(principal, action, resource) when { context.arguments.path like "/etc/*" };`,
    });

    it('asks a human when a permit holds and only @confirm forbids stand in the way, with their texts as the question', () => {
      expect(decide(asking, call('file_write', { path: '/prod/app.conf' }))).toEqual({ kind: 'confirm', reason: 'Writing under /prod needs a human.' });
      const both = decide(asking, call('file_write', { path: '/prod/app.conf', size: 5000 }));
      expect(both.kind === 'confirm' && both.reason.split('; ').sort()).toEqual(['A large write needs a human.', 'Writing under /prod needs a human.']);
      expect(decide(asking, call('file_write', { path: '/home/notes.md' }))).toEqual({ kind: 'allow' });
    });

    it('denies rather than asks when a plain forbid cannot be evaluated for the arguments', () => {
      const capped = gates.cedar({
        policies: `
          permit(principal, action, resource);
          @id("ask-pay") @confirm("Payments need a human.") forbid(principal, action, resource == Tool::"pay");
          @id("cap") forbid(principal, action, resource) when { context.arguments has amount && context.arguments.amount > 100 };`,
      });
      expect(decide(capped, call('pay', { amount: 40 }))).toEqual({ kind: 'confirm', reason: 'Payments need a human.' });
      expect(decide(capped, call('pay', { amount: 4_000.5 }))).toMatchObject({ kind: 'deny', reason: expect.stringContaining('"cap" could not be evaluated') });
    });

    it('still denies when a plain forbid also holds, or when no permit does', () => {
      const etc = gates.cedar({
        groups: { files: ['file_*'] },
        policies: `
          permit(principal, action, resource in ToolGroup::"files");
          @id("ask-all") @confirm("Every call needs a human.") forbid(principal, action, resource);
          @id("no-etc") @reason("System files are off limits.")
          forbid(principal, action, resource) when { context.arguments.path like "/etc/*" };`,
      });
      expect(decide(etc, call('file_read', { path: '/etc/passwd' }))).toMatchObject({ kind: 'deny', reason: expect.stringContaining('System files are off limits.') });
      expect(decide(etc, call('file_read', { path: '/home/a' }))).toEqual({ kind: 'confirm', reason: 'Every call needs a human.' });
      expect(decide(etc, call('shell', { path: '/home/a' }))).toMatchObject({ kind: 'deny', reason: expect.stringContaining('No Cedar policy permits calling "shell"') });
    });

    it('asks the same way for a tool called often, decided by its own smaller policy set', () => {
      for (let i = 0; i < often; i++) {
        expect(decide(asking, call('file_write', { path: i % 2 === 0 ? '/prod/x' : '/tmp/x' })).kind).toBe(i % 2 === 0 ? 'confirm' : 'allow');
      }
      // The last call (an allow) was decided by 4 of the 5 policies: all but the one for "calc".
      expect(sets.sizes.get(sets.used.at(-1) ?? '')).toBe(4);
    });

    it('falls back to the policy\'s @reason, then its id, when @confirm has no text', () => {
      const bare = gates.cedar({
        policies: `
          permit(principal, action, resource);
          @id("ask") @confirm("") @reason("Payments are checked by a person.") forbid(principal, action, resource == Tool::"pay");
          @id("ask-send") @confirm("") forbid(principal, action, resource == Tool::"send");`,
      });
      expect(decide(bare, call('pay'))).toEqual({ kind: 'confirm', reason: 'Payments are checked by a person.' });
      expect(decide(bare, call('send'))).toEqual({ kind: 'confirm', reason: 'Cedar policy "ask-send" asks a human to approve calling "send".' });
    });

    it('refuses @confirm on a permit when the gate is built, saying where it belongs', () => {
      expect(() => gates.cedar({ policies: `@id("p") @confirm("ask") permit(principal, action, resource);` })).toThrow(ConfigurationError);
      expect(() => gates.cedar({ policies: `@id("p") @confirm("ask") permit(principal, action, resource);` })).toThrow(/"p" is a permit annotated @confirm; put @confirm on a forbid policy/);
    });
  });
});
