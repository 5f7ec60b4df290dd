/**
 * An agent with extended thinking and a tool, end to end over HTTP: the real `@anthropic-ai/sdk`
 * client talks to a local server that replays a recorded Anthropic conversation and enforces
 * Anthropic's rule — with thinking on, the assistant turn before the tool results must start
 * with the signed thinking block, unchanged — answering a break of it with Anthropic's recorded
 * 400. The run completes only if the reasoning survives the loop, the journal and the request.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/agent/createAgent.ts';
import { anthropic } from '../../src/inference/anthropic.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { enforceThinkingRule, wireJson, wireReply } from '../support/anthropicWire.ts';
import { startOpenAIServer } from '../support/openaiServer.ts';
import type { OpenAIServer } from '../support/openaiServer.ts';
import type { InferenceError } from '../../src/inference/errors.ts';

const CANARY = 'sk-ant-canary-1b7e93d2c4a6f80e55';
let server: OpenAIServer;
const dirs: string[] = [];

beforeAll(async () => {
  server = await startOpenAIServer();
});
afterAll(async () => {
  await server.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => server.reset());

function agentWith(store: ReturnType<typeof createFileStore>, calls: string[]) {
  const country = defineTool({
    name: 'get_user_country',
    description: 'The country the user is in.',
    input: z.object({}),
    execute: () => {
      calls.push('get_user_country');
      return 'Mexico';
    },
  });
  return createAgent({
    model: {
      provider: anthropic({
        baseURL: server.baseURL.replace(/\/v1$/, ''),
        apiKey: CANARY,
        env: {},
        model: 'claude-sonnet-4-0',
        thinking: { budgetTokens: 3000 },
        timeoutMs: 5_000,
        retry: { maxRetries: 0 },
      }),
    },
    tools: [country],
    persistence: { store },
  });
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('an agent with extended thinking and tools on Anthropic', () => {
  it('completes a thinking + tool-use run against a server that enforces the signed-thinking rule', async () => {
    const issued = wireJson('thinking-tool-use.1');
    server.enqueue(wireReply('thinking-tool-use.1'), enforceThinkingRule(issued, wireReply('thinking-tool-use.2')));
    const dir = mkdtempSync(join(tmpdir(), 'actorloop-anthropic-'));
    dirs.push(dir);
    const calls: string[] = [];
    const agent = agentWith(createFileStore({ dir }), calls);

    const result = await agent.run('What is the largest city in the user country?');
    agent.stop();

    expect(result.error).toBeUndefined();
    expect(result.status).toBe('done');
    const final = (wireJson('thinking-tool-use.2')['content'] as { text: string }[])[0]?.text;
    expect(result.text).toBe(final);
    expect(calls).toEqual(['get_user_country']);
    expect(result.iterations).toBe(2);

    // The second request carried the thinking block first, then text and the tool use, then the result.
    const sent = (server.requests[1]?.body as { messages: { role: string; content: { type: string }[] }[] }).messages;
    expect(sent.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(sent[1]?.content.map((block) => block.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(sent[2]?.content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_01YGzqpRE16Vricda3Aqcejo', content: 'Mexico' }]);

    // The run's reasoning is kept on its messages, and the key is nowhere in what the run wrote.
    const thinking = (issued['content'] as { type: string; thinking?: string }[])[0]?.thinking ?? '';
    const written = filesUnder(dir).map((file) => readFileSync(file, 'utf8')).join('\n');
    expect(written).toContain(JSON.stringify(thinking).slice(1, 60));
    expect(written).not.toContain(CANARY);
    expect(JSON.stringify(server.requests.map((request) => request.body))).not.toContain(CANARY);
  });

  it('meets the recorded 400 when the signed thinking block does not come back', async () => {
    // The replay server is not a pushover: the same run with the thinking (and text) gone from the
    // assistant turn, so that it starts with its tool_use, is refused the way Anthropic refuses it.
    const issued = wireJson('thinking-tool-use.1');
    const stripped = { ...issued, content: (issued['content'] as { type: string }[]).filter((block) => block.type === 'tool_use') };
    server.enqueue({ kind: 'json', body: stripped }, enforceThinkingRule(issued, wireReply('thinking-tool-use.2')));
    const dir = mkdtempSync(join(tmpdir(), 'actorloop-anthropic-'));
    dirs.push(dir);
    const agent = agentWith(createFileStore({ dir }), []);

    const error = await agent.run('What is the largest city in the user country?').catch((e: unknown) => e);
    agent.stop();

    expect(error).toMatchObject({ code: 'bad_request' });
    expect((error as InferenceError).message).toContain('Expected `thinking` or `redacted_thinking`, but found `tool_use`');
    expect(server.requests).toHaveLength(2);
  });
});
