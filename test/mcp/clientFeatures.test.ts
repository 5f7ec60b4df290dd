/**
 * What actorloop answers when an MCP server asks the client something: sampling (off unless the
 * config allows it; answered by the agent's own model without its tools, the usage counted in
 * the run) and roots. The fixture server is real (official SDK over stdio); the model is scripted
 * and records what it was asked.
 */
import { describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/createAgent.ts';
import { connectMcpServer } from '../../src/mcp/connect.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import { controlled, toolResults, until } from './support.ts';
import type { McpSampler } from '../../src/mcp/sampling.ts';

const SLOW = 60_000;

describe('sampling', () => {
  it(
    'is refused with an MCP error saying how to allow it when the config does not',
    async () => {
      const model = scriptedModel([{ toolCalls: [{ name: 'ctl_sample', arguments: { prompt: 'hi', maxTokens: 50 } }] }, { text: 'done' }]);
      const agent = createAgent({ model, mcpServers: [controlled('ctl')] });
      try {
        const result = await agent.run('sample');
        expect(result.text).toBe('done');
        const [seen] = toolResults(model.calls[1]);
        expect(seen?.content).toMatch(/^refused: .*Sampling is off for MCP server "ctl".*sampling: true/);
        // The model was asked twice, by the run: never by the server.
        expect(model.calls).toHaveLength(2);
      } finally {
        await agent.close();
      }
    },
    SLOW,
  );

  it(
    "is answered by the agent's model when allowed: no tools offered, the cap applied, the usage counted in the run",
    async () => {
      const model = scriptedModel([
        { toolCalls: [{ name: 'ctl_sample', arguments: { prompt: 'summarise the sea', maxTokens: 500 } }], usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 } },
        { text: 'the sea is big', usage: { promptTokens: 100, completionTokens: 7, totalTokens: 107 } },
        { text: 'done', usage: { promptTokens: 20, completionTokens: 2, totalTokens: 22 } },
      ]);
      const agent = createAgent({ model, mcpServers: [{ ...controlled('ctl'), sampling: { maxTokens: 64 } }] });
      const entries: JournalEntry[] = [];
      agent.events$.subscribe((entry) => entries.push(entry));
      try {
        const result = await agent.run('sample');
        const sampleRequest = model.calls[1];
        expect(sampleRequest?.tools ?? []).toEqual([]);
        expect(sampleRequest?.maxTokens).toBe(64);
        expect(sampleRequest?.messages).toEqual([
          { role: 'system', content: 'You summarise.' },
          { role: 'user', content: 'summarise the sea' },
        ]);
        const [seen] = toolResults(model.calls[2]);
        expect(JSON.parse(seen?.content ?? '{}')).toMatchObject({ role: 'assistant', content: { type: 'text', text: 'the sea is big' }, stopReason: 'endTurn' });
        expect(result.usage.totalTokens).toBe(15 + 107 + 22);
        const sampled = entries.map((entry) => entry.event).filter((event) => event.type === 'mcp.sampled');
        expect(sampled).toEqual([expect.objectContaining({ server: 'ctl', usage: expect.objectContaining({ totalTokens: 107 }) })]);
      } finally {
        await agent.close();
      }
    },
    SLOW,
  );

  it(
    "caps a server's huge maxTokens: at the agent model's maxTokens, and at 4 096 when neither it nor the config sets one",
    async () => {
      const script = () => scriptedModel([{ toolCalls: [{ name: 'ctl_sample', arguments: { prompt: 'write forever', maxTokens: 1_000_000_000 } }] }, { text: 'short' }, { text: 'done' }]);
      const capped = script();
      const withModelCap = createAgent({ model: { provider: capped, maxTokens: 300 }, mcpServers: [{ ...controlled('ctl'), sampling: true }] });
      try {
        await withModelCap.run('sample');
      } finally {
        await withModelCap.close();
      }
      expect(capped.calls[1]?.tools ?? []).toEqual([]);
      expect(capped.calls[1]?.maxTokens).toBe(300);
      // The config's cap does not lift the model's.
      const both = script();
      const withBoth = createAgent({ model: { provider: both, maxTokens: 300 }, mcpServers: [{ ...controlled('ctl'), sampling: { maxTokens: 2_000 } }] });
      try {
        await withBoth.run('sample');
      } finally {
        await withBoth.close();
      }
      expect(both.calls[1]?.maxTokens).toBe(300);
      const uncapped = script();
      const withDefault = createAgent({ model: uncapped, mcpServers: [{ ...controlled('ctl'), sampling: true }] });
      try {
        await withDefault.run('sample');
      } finally {
        await withDefault.close();
      }
      expect(uncapped.calls[1]?.maxTokens).toBe(4_096);
    },
    SLOW,
  );
});

describe('a sample still being answered when the call that asked ends', () => {
  it(
    "is withdrawn: the agent's model stops, so it spends nothing for a call (or run) that is over",
    async () => {
      const asked: AbortSignal[] = [];
      const sampler: McpSampler = (request) => {
        asked.push(request.signal);
        return new Promise((_, reject) => request.signal.addEventListener('abort', () => reject(new Error('sampling withdrawn'))));
      };
      const server = await connectMcpServer({ ...controlled('ctl'), sampling: true }, { sampler });
      try {
        const sample = (await server.tools()).find((tool) => tool.name === 'ctl_sample');
        const call = new AbortController();
        const pending = Promise.resolve(sample?.execute({ prompt: 'a long essay', maxTokens: 500 }, { signal: call.signal, toolCallId: 't1', idempotencyKey: 'r:t1', runId: 'r', agentId: 'a' })).catch(
          (e: unknown) => e,
        );
        expect(await until(() => asked.length === 1)).toBe(true);
        call.abort(new Error('run cancelled'));
        await pending;
        expect(await until(() => asked[0]?.aborted === true, 1_000)).toBe(true);
      } finally {
        await server.close();
      }
    },
    SLOW,
  );
});

describe('roots', () => {
  it(
    'are listed to a server that asks, named after their last segment',
    async () => {
      const server = await connectMcpServer({ ...controlled('ctl'), roots: ['file:///tmp/project-a', 'file:///srv/data'] });
      try {
        const roots = (await server.tools()).find((tool) => tool.name === 'ctl_roots');
        const text = await roots?.execute({}, { signal: new AbortController().signal, toolCallId: 't1', idempotencyKey: 'r:t1', runId: 'r', agentId: 'a' });
        expect(JSON.parse(String(text))).toEqual({
          roots: [
            { uri: 'file:///tmp/project-a', name: 'project-a' },
            { uri: 'file:///srv/data', name: 'data' },
          ],
        });
      } finally {
        await server.close();
      }
    },
    SLOW,
  );

  it(
    'are not offered when none are configured: a server that asks anyway gets method-not-found',
    async () => {
      const server = await connectMcpServer(controlled('ctl'));
      try {
        const roots = (await server.tools()).find((tool) => tool.name === 'ctl_roots');
        const text = await roots?.execute({}, { signal: new AbortController().signal, toolCallId: 't1', idempotencyKey: 'r:t1', runId: 'r', agentId: 'a' });
        expect(String(text)).toMatch(/^refused: .*Method not found/);
      } finally {
        await server.close();
      }
    },
    SLOW,
  );

  it('must be file:// URIs: anything else is a configuration error naming the field', async () => {
    await expect(connectMcpServer({ ...controlled('ctl'), roots: ['https://example.com/x'] })).rejects.toThrow(/roots\.0/);
  });
});
