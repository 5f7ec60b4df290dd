import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.ts';
import { evaluateGate } from '../../src/policy/evaluateGate.ts';
import { gates } from '../../src/policy/gates.ts';
import type { GateContext, GateDecision, PolicyGate, ProposedAction } from '../../src/policy/types.ts';

const context: GateContext = { runId: 'run-1', agentId: 'agent-1', iteration: 1, messages: [] };
function action(tool: string, permissions: readonly string[] = [], args: unknown = {}): ProposedAction {
  return { toolCallId: 'call-1', tool, arguments: args, permissions };
}
function decide(gate: PolicyGate, proposed: ProposedAction): Promise<GateDecision> {
  return evaluateGate(gate, proposed, context);
}

describe('gates.permissive', () => {
  it('allows every call', async () => {
    expect(await decide(gates.permissive(), action('rm', ['fs.delete']))).toEqual({ kind: 'allow' });
  });
});

describe('gates.rules', () => {
  it('allows everything when no rule is given', async () => {
    expect(await decide(gates.rules({}), action('anything', ['net.fetch']))).toEqual({ kind: 'allow' });
  });

  it('denies tools matching a deny glob and names the rule', async () => {
    const gate = gates.rules({ deny: ['shell_*'] });
    const decision = await decide(gate, action('shell_exec'));
    expect(decision).toMatchObject({ kind: 'deny' });
    expect(decision.kind === 'deny' && decision.reason).toMatch(/Tool "shell_exec" is denied by policy rule deny: "shell_\*"/);
    expect(await decide(gate, action('search'))).toEqual({ kind: 'allow' });
  });

  it('denies tools that are not on a given allow list', async () => {
    const gate = gates.rules({ allow: ['read_*', 'search'] });
    expect(await decide(gate, action('read_file'))).toEqual({ kind: 'allow' });
    expect(await decide(gate, action('search'))).toEqual({ kind: 'allow' });
    const decision = await decide(gate, action('write_file'));
    expect(decision.kind === 'deny' && decision.reason).toMatch(/"write_file" is not on the allow list \(allow: "read_\*", "search"\)/);
  });

  it('denies everything with an empty allow list', async () => {
    expect(await decide(gates.rules({ allow: [] }), action('search'))).toMatchObject({ kind: 'deny' });
  });

  it('lets deny win over allow', async () => {
    const gate = gates.rules({ allow: ['read_*'], deny: ['read_secrets'] });
    const decision = await decide(gate, action('read_secrets'));
    expect(decision.kind === 'deny' && decision.reason).toMatch(/denied by policy rule deny: "read_secrets"/);
    expect(await decide(gate, action('read_notes'))).toEqual({ kind: 'allow' });
  });

  it('denies a tool declaring a permission that matches permissions.deny', async () => {
    const gate = gates.rules({ permissions: { deny: ['net.*'] } });
    const decision = await decide(gate, action('fetch', ['fs.read', 'net.fetch']));
    expect(decision.kind === 'deny' && decision.reason).toMatch(
      /"fetch" needs permission "net.fetch", denied by policy rule permissions.deny: "net.\*"/,
    );
    expect(await decide(gate, action('cat', ['fs.read']))).toEqual({ kind: 'allow' });
  });

  it('requires every permission to match permissions.allow when it is given', async () => {
    const gate = gates.rules({ permissions: { allow: ['fs.read', 'fs.list'] } });
    expect(await decide(gate, action('ls', ['fs.list', 'fs.read']))).toEqual({ kind: 'allow' });
    expect(await decide(gate, action('pure_math'))).toEqual({ kind: 'allow' });
    const decision = await decide(gate, action('cp', ['fs.read', 'fs.write']));
    expect(decision.kind === 'deny' && decision.reason).toMatch(/needs permission "fs.write", which no policy rule in permissions.allow grants/);
  });

  it('lets a permission deny win over a tool allow and a permission allow', async () => {
    const gate = gates.rules({ allow: ['*'], permissions: { allow: ['*'], deny: ['fs.delete'] } });
    const decision = await decide(gate, action('rm', ['fs.delete']));
    expect(decision.kind === 'deny' && decision.reason).toMatch(/permissions.deny: "fs.delete"/);
  });

  it('asks a human for tools matching confirm or declaring a permission matching permissions.confirm, naming the rule', async () => {
    const gate = gates.rules({ confirm: ['send_*'], permissions: { confirm: ['fs.write'] } });
    const send = await decide(gate, action('send_email'));
    expect(send.kind).toBe('confirm');
    expect(send.kind === 'confirm' && send.reason).toMatch(/Tool "send_email" needs a human's approval by policy rule confirm: "send_\*"/);
    const write = await decide(gate, action('save', ['fs.read', 'fs.write']));
    expect(write.kind === 'confirm' && write.reason).toMatch(/"save" needs permission "fs.write", which policy rule permissions.confirm: "fs.write" leaves to a human/);
    expect(await decide(gate, action('read', ['fs.read']))).toEqual({ kind: 'allow' });
  });

  it('lets every deny rule win over a confirm rule', async () => {
    const gate = gates.rules({ allow: ['send_*', 'save'], deny: ['send_all'], confirm: ['send_*', 'save', 'other'], permissions: { deny: ['net.*'], confirm: ['fs.*'] } });
    expect(await decide(gate, action('send_all'))).toMatchObject({ kind: 'deny', reason: expect.stringContaining('deny: "send_all"') });
    expect(await decide(gate, action('save', ['fs.write', 'net.post']))).toMatchObject({ kind: 'deny', reason: expect.stringContaining('permissions.deny') });
    expect(await decide(gate, action('other'))).toMatchObject({ kind: 'deny', reason: expect.stringContaining('not on the allow list') });
    expect(await decide(gate, action('send_one'))).toMatchObject({ kind: 'confirm' });
  });

  it('matches tool names literally apart from * and ?', async () => {
    const gate = gates.rules({ allow: ['fs.read', 'tool_?'] });
    expect(await decide(gate, action('fs.read'))).toEqual({ kind: 'allow' });
    expect(await decide(gate, action('fsXread'))).toMatchObject({ kind: 'deny' });
    expect(await decide(gate, action('tool_1'))).toEqual({ kind: 'allow' });
    expect(await decide(gate, action('tool_10'))).toMatchObject({ kind: 'deny' });
  });

  it('refuses unknown keys and non-string patterns with a ConfigurationError', () => {
    expect(() => gates.rules({ denied: ['x'] } as never)).toThrow(ConfigurationError);
    expect(() => gates.rules({ allow: [1] } as never)).toThrow(/allow/);
  });
});

describe('gates.compose', () => {
  const modifying = (name: string, key: string) =>
    gates.fromFunction(name, (proposed) => ({
      kind: 'modify',
      arguments: { ...(proposed.arguments as Record<string, unknown>), [key]: true },
      reason: `${name} added ${key}`,
    }));

  it('allows when every member allows', async () => {
    expect(await decide(gates.compose(gates.permissive(), gates.rules({})), action('x'))).toEqual({ kind: 'allow' });
    expect(await decide(gates.compose(), action('x'))).toEqual({ kind: 'allow' });
  });

  it('stops at the first deny', async () => {
    const seen: string[] = [];
    const spy = (name: string): PolicyGate =>
      gates.fromFunction(name, () => {
        seen.push(name);
        return { kind: 'allow' };
      });
    const gate = gates.compose(spy('first'), gates.rules({ deny: ['rm'] }), spy('after'));
    const decision = await decide(gate, action('rm'));
    expect(decision.kind === 'deny' && decision.reason).toMatch(/deny: "rm"/);
    expect(seen).toEqual(['first']);
  });

  it('hands modified arguments to the next member and joins the reasons', async () => {
    let seenByLast: unknown;
    const last = gates.fromFunction('last', (proposed) => {
      seenByLast = proposed.arguments;
      return { kind: 'allow' };
    });
    const gate = gates.compose(modifying('a', 'x'), modifying('b', 'y'), last);
    const decision = await decide(gate, action('t', [], { q: 1 }));
    expect(seenByLast).toEqual({ q: 1, x: true, y: true });
    expect(decision).toEqual({ kind: 'modify', arguments: { q: 1, x: true, y: true }, reason: 'a added x; b added y' });
  });

  it('denies after a modification when a later member denies', async () => {
    const gate = gates.compose(modifying('a', 'x'), gates.fromFunction('no', () => ({ kind: 'deny', reason: 'no' })));
    expect(await decide(gate, action('t'))).toEqual({ kind: 'deny', reason: 'no' });
  });

  const asking = (name: string) => gates.fromFunction(name, () => ({ kind: 'confirm', reason: `${name} asks` }));

  it('orders deny over confirm over allow: a confirm outranks allows, and a later deny still denies', async () => {
    expect(await decide(gates.compose(gates.permissive(), asking('a'), gates.permissive()), action('t'))).toEqual({ kind: 'confirm', reason: 'a asks' });
    expect(await decide(gates.compose(asking('a'), asking('b')), action('t'))).toEqual({ kind: 'confirm', reason: 'a asks; b asks' });
    const no = gates.fromFunction('no', () => ({ kind: 'deny', reason: 'no' }));
    expect(await decide(gates.compose(asking('a'), no), action('t'))).toEqual({ kind: 'deny', reason: 'no' });
    expect(await decide(gates.compose(no, asking('a')), action('t'))).toEqual({ kind: 'deny', reason: 'no' });
  });

  it('keeps the arguments a member modified in the confirm, whichever comes first', async () => {
    const before = await decide(gates.compose(modifying('m', 'x'), asking('a')), action('t', [], { q: 1 }));
    expect(before).toEqual({ kind: 'confirm', reason: 'a asks; the arguments were modified: m added x', arguments: { q: 1, x: true } });
    let seen: unknown;
    const last = gates.fromFunction('last', (proposed) => {
      seen = proposed.arguments;
      return { kind: 'allow' };
    });
    const after = await decide(gates.compose(asking('a'), modifying('m', 'x'), last), action('t', [], { q: 1 }));
    expect(after).toEqual({ kind: 'confirm', reason: 'a asks; the arguments were modified: m added x', arguments: { q: 1, x: true } });
    expect(seen).toEqual({ q: 1, x: true });
  });

  it('mixes synchronous and asynchronous members in order', async () => {
    const order: string[] = [];
    const asyncModify = gates.fromFunction('async', async (proposed) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      order.push('async');
      return { kind: 'modify', arguments: { ...(proposed.arguments as object), later: 1 }, reason: 'async' };
    });
    const sync = gates.fromFunction('sync', (proposed) => {
      order.push('sync');
      return { kind: 'modify', arguments: { ...(proposed.arguments as object), sync: 1 }, reason: 'sync' };
    });
    const decision = await decide(gates.compose(asyncModify, sync), action('t'));
    expect(order).toEqual(['async', 'sync']);
    expect(decision).toEqual({ kind: 'modify', arguments: { later: 1, sync: 1 }, reason: 'async; sync' });
  });

  it('answers synchronously when every member is synchronous', () => {
    const gate = gates.compose(gates.rules({ deny: ['rm'] }), gates.permissive());
    expect(gate.evaluate(action('ls'), context)).toEqual({ kind: 'allow' });
    expect(gate.evaluate(action('rm'), context)).toMatchObject({ kind: 'deny' });
  });

  it('denies when a member throws, instead of throwing or skipping it', async () => {
    const broken = gates.fromFunction('broken', () => {
      throw new Error('boom');
    });
    const gate = gates.compose(gates.permissive(), broken, gates.permissive());
    const decision = await decide(gate, action('t'));
    expect(decision.kind === 'deny' && decision.reason).toMatch(/policy gate "broken" failed/);
    expect(gate.name).toBe('compose(permissive, broken, permissive)');
  });

  it('reports a failing member through composeWith options', async () => {
    const failures: string[] = [];
    const gate = gates.composeWith([gates.fromFunction('garbage', () => 'yes' as never)], {
      onGateError: (error) => failures.push(`${error.gate}:${error.failure}`),
    });
    expect(await decide(gate, action('t'))).toMatchObject({ kind: 'deny' });
    expect(failures).toEqual(['garbage:invalid_decision']);
  });
});

describe('gates.fromFunction', () => {
  it('wraps a function as a named gate', async () => {
    const gate = gates.fromFunction('only-search', (proposed) =>
      proposed.tool === 'search' ? { kind: 'allow' } : { kind: 'deny', reason: 'search only' },
    );
    expect(gate.name).toBe('only-search');
    expect(await decide(gate, action('search'))).toEqual({ kind: 'allow' });
    expect(await decide(gate, action('ls'))).toEqual({ kind: 'deny', reason: 'search only' });
  });

  it('refuses an empty name or a non-function', () => {
    expect(() => gates.fromFunction('', () => ({ kind: 'allow' }))).toThrow(ConfigurationError);
    expect(() => gates.fromFunction('x', 'allow' as never)).toThrow(ConfigurationError);
  });
});
