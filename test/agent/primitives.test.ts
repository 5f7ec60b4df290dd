import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from '../../src/index.ts';
import { createMemoryKnowledgeStore } from '../../src/memory.ts';
import { estimateTokens } from '../../src/context/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';

const tool = (name: string, description = `The ${name} tool.`) =>
  defineTool({ name, description, input: z.object({}), execute: () => 'x'.repeat(4_000) });

describe('optional primitives through createAgent', () => {
  it('shows the model only the tools the profile keeps', async () => {
    const model = scriptedModel([{ text: 'ok' }]);
    const agent = createAgent({
      model,
      tools: [tool('fs_read', 'Read a file [verified]'), tool('fs_write', 'Write a file [verified]'), tool('shell'), tool('net_get', 'Fetch [verified]')],
      policy: { toolProfile: { include: ['fs_*', 'net_*', 'shell'], exclude: ['*_write'], requireVerified: true, maxTools: 1 } },
    });
    await agent.run('go');
    expect(model.calls[0]?.tools?.map((t) => t.name)).toEqual(['fs_read']);
    expect(agent.tools).toEqual(['fs_read']);
  });

  it('keeps every request within the context budget once it is configured', async () => {
    let n = 0;
    const model = scriptedModel((request) =>
      request.messages.filter((m) => m.role === 'tool').length >= 12 || n > 40 ? { text: 'done' } : { toolCalls: [{ id: `c${n++}`, name: 'big', arguments: {} }] },
    );
    // Repeats one call on purpose, to fill the context: stuck detection would end the run first.
    const agent = createAgent({ model, tools: [tool('big')], context: { budget: { tokenBudget: 3_000, strategy: 'slidingWindow' } }, limits: { maxIterations: 60 }, resilience: { stuckDetection: false } });
    const compacted: number[] = [];
    agent.events$.subscribe(({ event }) => event.type === 'context.compacted' && compacted.push(event.tokensAfter));
    await agent.run('go');
    expect(model.calls.length).toBeGreaterThan(5);
    for (const call of model.calls) expect(estimateTokens(call.messages)).toBeLessThanOrEqual(3_000);
    expect(compacted.length).toBeGreaterThan(0);
  });

  it('changes nothing when no primitive is configured', async () => {
    const model = scriptedModel([{ toolCalls: [{ id: 'a', name: 'big', arguments: {} }] }, { text: 'done' }]);
    const agent = createAgent({ model, tools: [tool('big')] });
    const result = await agent.run('go');
    expect(model.calls[1]?.messages).toEqual(result.messages.slice(0, -1));
  });

  it('injects pre-hydrated context before the task when preHydration is configured', async () => {
    const model = scriptedModel([{ text: 'ok' }]);
    const lookup = defineTool({ name: 'lookup_issue', description: 'Issue text', input: z.object({ ref: z.string() }), execute: ({ ref }) => `issue ${ref}: the build is red` });
    const events: string[] = [];
    const agent = createAgent({ model, system: 'sys', tools: [lookup], context: { preHydration: { resolvers: { issue: 'lookup_issue' } } } });
    agent.events$.subscribe(({ event }) => events.push(event.type));
    await agent.run('Please fix #42 today');
    const sent = model.calls[0]?.messages ?? [];
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'user']);
    expect(String(sent[1]?.content).startsWith('[PRE_HYDRATED_CONTEXT]')).toBe(true);
    expect(sent[1]?.content).toContain('the build is red');
    expect(events).toContain('prehydration.completed');
  });

  it('injects knowledge, offers the knowledge tools and remembers the answer when knowledge is configured', async () => {
    const store = createMemoryKnowledgeStore();
    await store.add({ subject: 'deploy', predicate: 'requires', object: 'a green build on main', confidence: 0.9 });
    const model = scriptedModel([{ text: 'Deploys need a green build on main.' }, { text: 'again' }]);
    const agent = createAgent({ model, knowledge: { store } });
    await agent.run('What does a deploy require?');
    const sent = model.calls[0]?.messages ?? [];
    expect(sent.some((m) => m.role === 'system' && String(m.content).startsWith('[KNOWLEDGE_CONTEXT]') && m.content.includes('green build'))).toBe(true);
    expect(model.calls[0]?.tools?.map((t) => t.name).sort()).toEqual(['recall_knowledge', 'store_knowledge']);
    expect(store.items().some((item) => item.scope === 'working' && item.object.includes('green build on main'))).toBe(true);
  });
});
