/**
 * Spawning, addressing and listing agents; every misuse is a typed error naming the fix.
 */
import type { AnyActorRef } from 'xstate';
import { describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/createAgent.ts';
import { ConfigurationError } from '../../src/core/errors.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { trackedSystem } from './helpers.ts';

const model = () => scriptedModel([{ text: 'ok' }]);

describe('agent system', () => {
  it('spawns agents addressable by id, through the system and through XState', () => {
    const { system } = trackedSystem();
    const a = system.spawn('a', { model: model() });
    const b = system.spawn('b', { model: model() }, { parent: 'a' });

    expect(system.get('a')).toBe(a);
    expect(a.agent.id).toBe('a');
    expect(b.parent).toBe('a');
    expect(a.parent).toBeUndefined();
    expect(system.list().map((agent) => agent.id)).toEqual(['a', 'b']);
    expect(system.has('b')).toBe(true);
    expect(system.has('c')).toBe(false);
    expect(a.children()).toEqual(['b']);
    // One XState system: each host is registered under its agent id, as a child of the root.
    expect(system.actor.system.get('a')).toBe(a.actor);
    expect(system.actor.system.get('b')).toBe(b.actor);
    expect(Object.keys(system.actor.getSnapshot().children).sort()).toEqual(['a', 'b']);
    expect(b.actor.getSnapshot().value).toBe('idle');
  });

  it("runs a task's agent loop in the system's actor tree, under the agent's host", async () => {
    const { system, actors } = trackedSystem();
    const a = system.spawn('a', { model: model() });
    await system.ask('a', 'go');
    const runs = [...actors].filter((actor): actor is AnyActorRef => (actor as AnyActorRef).src !== undefined && ((actor as AnyActorRef).src as { id?: string }).id === 'agent');
    expect(runs).toHaveLength(1);
    const run = runs[0] as AnyActorRef;
    expect(run.system).toBe(system.actor.system);
    const chain: AnyActorRef[] = [];
    for (let parent = run._parent; parent !== undefined; parent = parent._parent) chain.push(parent);
    expect(chain).toContain(a.actor);
    expect(chain.at(-1)).toBe(system.actor);
  });

  it('spawns an existing Agent whose id matches, and refuses one whose id does not', () => {
    const { system } = trackedSystem();
    const agent = createAgent({ id: 'writer', model: model() });
    expect(system.spawn('writer', agent).agent).toBe(agent);
    const other = createAgent({ id: 'someone-else', model: model() });
    expect(() => system.spawn('editor', other)).toThrow(ConfigurationError);
    expect(() => system.spawn('editor', { id: 'x', model: model() })).toThrow(/spawn it as "x"/);
    expect(system.has('editor')).toBe(false);
  });

  it('refuses a duplicate id with a ConfigurationError and keeps the first agent', () => {
    const { system } = trackedSystem();
    const first = system.spawn('a', { model: model() });
    expect(() => system.spawn('a', { model: model() })).toThrow(ConfigurationError);
    expect(system.get('a')).toBe(first);
    expect(system.list()).toHaveLength(1);
  });

  it('refuses malformed ids and concurrency', () => {
    const { system } = trackedSystem();
    for (const id of ['', ' a', 'a b', '__proto__', 'x'.repeat(129)]) {
      expect(() => system.spawn(id, { model: model() }), id).toThrow(ConfigurationError);
    }
    expect(() => system.spawn('a', { model: model() }, { concurrency: 0 })).toThrow(/positive integer/);
    expect(() => system.spawn('a', { model: model() }, { concurrency: 1.5 })).toThrow(ConfigurationError);
    expect(system.list()).toEqual([]);
  });

  it('answers unknown ids with AgentSystemError (agent_not_found) listing the live agents', async () => {
    const { system } = trackedSystem();
    system.spawn('a', { model: model() });
    const error = (() => {
      try {
        system.get('nobody');
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toMatchObject({ code: 'agent_not_found' });
    expect(error).toMatchObject({ code: 'agent_not_found', blame: 'user', agentId: 'nobody', known: ['a'] });
    expect(() => system.spawn('b', { model: model() }, { parent: 'nobody' })).toThrow(expect.objectContaining({ code: 'agent_not_found' }));
    expect(() => system.tell('nobody', 'hi')).toThrow(expect.objectContaining({ code: 'agent_not_found' }));
    expect(() => system.tell('a', 'hi', { from: 'nobody' })).toThrow(expect.objectContaining({ code: 'agent_not_found' }));
    expect(() => system.stop('nobody')).toThrow(expect.objectContaining({ code: 'agent_not_found' }));
    await expect(system.ask('nobody', 'hi')).rejects.toMatchObject({ code: 'agent_not_found' });
  });

  it('refuses empty messages and bad timeouts', async () => {
    const { system } = trackedSystem();
    system.spawn('a', { model: model() });
    expect(() => system.tell('a', '  ')).toThrow(ConfigurationError);
    await expect(system.ask('a', 'hi', { timeoutMs: 0 })).rejects.toThrow(/timeoutMs/);
    await expect(system.ask('a', 'hi', { timeoutMs: Number.NaN })).rejects.toBeInstanceOf(ConfigurationError);
  });

  it('cannot be used after stopAll, whose events$ completes', () => {
    const { system } = trackedSystem();
    system.spawn('a', { model: model() });
    let completed = false;
    system.events$.subscribe({ complete: () => (completed = true) });
    system.stopAll();
    expect(completed).toBe(true);
    expect(system.actor.getSnapshot().status).toBe('stopped');
    expect(system.list()).toEqual([]);
    expect(() => system.spawn('b', { model: model() })).toThrow(/createAgentSystem/);
    expect(() => system.stopAll()).not.toThrow();
  });
});
