/**
 * An MCP server's question (elicitation) through the AG-UI handler: the AG-UI run ends with an
 * interrupt carrying the question and the form's JSON Schema, and `@ag-ui/client`'s HttpAgent
 * answers it with a resume entry whose payload is the answer. The server is real (official SDK
 * over stdio) and notes every answer it receives.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpAgent } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';
import type { BaseEvent, ResumeEntry } from '@ag-ui/core';
import { createAgent } from '../../src/agent/createAgent.ts';
import type { Agent } from '../../src/agent/types.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { createAgUiHandler } from '../../src/web/agUi.ts';
import { controlled } from '../mcp/support.ts';
import { post, runInput, serve, type Served } from './support.ts';

const SLOW = 60_000;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function run(client: HttpAgent, runId: string, resume?: ResumeEntry[]): Promise<BaseEvent[]> {
  const events: BaseEvent[] = [];
  await client.runAgent({ runId, ...(resume === undefined ? {} : { resume }) }, { onEvent: ({ event }) => void events.push(EventSchemas.parse(event)) });
  return events;
}

describe('an MCP server asking the page a question', () => {
  it(
    'ends the AG-UI run with an interrupt carrying the question and its schema; a bad answer is refused, a resume entry with a good one reaches the server',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'actorloop-web-elicit-'));
      const marker = join(dir, 'answers');
      const model = scriptedModel((request) => (request.messages.some((m) => m.role === 'tool') ? { text: 'done' } : { toolCalls: [{ name: 'ctl_ask', arguments: {} }] }));
      const agent: Agent = createAgent({ model, mcpServers: [controlled('ctl', undefined, { MARKER_FILE: marker })] });
      const served: Served = await serve(createAgUiHandler(agent));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }), () => agent.close(), () => served.close());
      const client = new HttpAgent({ url: served.url, threadId: 't', initialMessages: [{ id: 'u1', role: 'user', content: 'Ask me.' }] });

      const first = await run(client, 'run-ask');
      const finished = first.at(-1) as { type: string; outcome?: { type: string; interrupts: { id: string }[] } };
      expect(finished).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-ask', outcome: { type: 'interrupt' } });
      const [interrupt] = finished.outcome?.interrupts ?? [];
      expect(interrupt).toEqual({
        id: expect.stringMatching(/^run-ask\/question:\d+$/),
        reason: 'elicitation',
        message: 'Who are you?',
        responseSchema: expect.objectContaining({ required: ['name', 'age'] }),
        metadata: { server: 'ctl' },
      });

      // An answer that does not fit the form: refused, and the run still waits.
      const interruptId = interrupt?.id as string;
      const bad = await post(served.url, { ...runInput('Ask me.', 'run-ask-bad'), resume: [{ interruptId, status: 'resolved', payload: { name: 'Ada', age: 'old' } }] });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/age: .*still waiting/);

      // An answer to another wait of the run is refused too.
      const stale = await post(served.url, { ...runInput('Ask me.', 'run-ask-stale'), resume: [{ interruptId: 'run-ask/question:1', status: 'resolved', payload: { name: 'Ada', age: 36 } }] });
      expect(stale.status).toBe(409);

      const second = await run(client, 'run-ask-2', [{ interruptId, status: 'resolved', payload: { name: 'Ada', age: 36 } }]);
      expect(second[0]).toMatchObject({ type: 'RUN_STARTED', runId: 'run-ask-2' });
      expect(second.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-ask-2', outcome: { type: 'success' }, result: { text: 'done' } });
      const answers = existsSync(marker) ? readFileSync(marker, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as unknown) : [];
      expect(answers).toEqual([{ action: 'accept', content: { name: 'Ada', age: 36, team: 'blue' } }]);
    },
    SLOW,
  );
});
