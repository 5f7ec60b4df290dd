/**
 * An MCP server's question asked by a sub-agent's tool, answered through AG-UI: the served run's AG-UI run ends
 * with the sub-run's question as an interrupt naming the sub-run, and HttpAgent's resume entry carrying the
 * answer reaches the server, after which the served run's tree streams on. The server is real (official SDK over
 * stdio) and notes every answer it receives.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpAgent } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';
import type { BaseEvent, ResumeEntry } from '@ag-ui/core';
import { scriptedModel } from '../../src/testing/index.ts';
import { createAgUiHandler } from '../../src/web/agUi.ts';
import { trackedSystem } from '../system/helpers.ts';
import { controlled } from '../mcp/support.ts';
import { post, runInput, serve } from './support.ts';

const SLOW = 60_000;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type AgUiEvent = BaseEvent & Record<string, unknown>;

async function run(client: HttpAgent, runId: string, resume?: ResumeEntry[]): Promise<AgUiEvent[]> {
  const events: AgUiEvent[] = [];
  await client.runAgent({ runId, ...(resume === undefined ? {} : { resume }) }, { onEvent: ({ event }) => void events.push(EventSchemas.parse(event) as AgUiEvent) });
  return events;
}

describe("a sub-agent's MCP server asking the page a question (AG-UI)", () => {
  it(
    "ends the AG-UI run with the sub-run's question as an interrupt naming it; a bad answer is refused, a resume entry with a good one reaches the server and the tree finishes",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'actorloop-web-subelicit-'));
      const marker = join(dir, 'answers');
      const { system } = trackedSystem();
      const asker = scriptedModel((request) => (request.messages.some((m) => m.role === 'tool') ? { text: 'Ada, 36.' } : { toolCalls: [{ name: 'ctl_ask', arguments: {} }] }));
      system.spawn('asker', { model: asker, mcpServers: [controlled('ctl', undefined, { MARKER_FILE: marker })] });
      const lead = scriptedModel([{ toolCalls: [{ name: 'delegate_to_asker', arguments: { task: 'Ask who they are.' } }] }, { text: 'They are Ada.' }]);
      system.spawn('lead', { model: lead, tools: [system.delegateTool('asker')] });
      const served = await serve(createAgUiHandler(system.get('lead').agent, { system }));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }), () => system.get('asker').agent.close(), () => served.close());
      const client = new HttpAgent({ url: served.url, threadId: 't-sub', initialMessages: [{ id: 'u1', role: 'user', content: 'Who am I?' }] });

      const first = await run(client, 'run-q');
      const sub = first.find((e) => e.type === 'SUBAGENT_STARTED' && e.name === 'asker')?.subagentRunId as string;
      expect(first.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-q', outcome: { type: 'interrupt' } });
      const [interrupt] = (first.at(-1)?.outcome as { interrupts: Record<string, unknown>[] }).interrupts;
      expect(interrupt).toEqual({
        id: expect.stringMatching(new RegExp(`^${sub}/question:\\d+$`)),
        subagentRunId: sub,
        reason: 'elicitation',
        message: 'Who are you?',
        responseSchema: expect.objectContaining({ required: ['name', 'age'] }),
        metadata: { server: 'ctl' },
      });
      expect(first.find((e) => e.type === 'SUBAGENT_FINISHED')).toMatchObject({ subagentRunId: sub, outcome: { type: 'suspended', interruptIds: [interrupt?.id] } });

      // An answer that does not fit the form: refused, and the sub-run still waits.
      const interruptId = interrupt?.id as string;
      const bad = await post(served.url, { ...runInput('Who am I?', 'run-q-bad', 't-sub'), resume: [{ interruptId, status: 'resolved', payload: { name: 'Ada', age: 'old' } }] });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/age: .*still waiting/);
      expect(system.get('asker').agent.handle(sub)?.phase()).toBe('awaitingHuman');

      const second = await run(client, 'run-q-2', [{ interruptId, status: 'resolved', payload: { name: 'Ada', age: 36 } }]);
      expect(second[0]).toMatchObject({ type: 'RUN_STARTED', runId: 'run-q-2' });
      expect(second.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => e.subagentRunId)).toEqual([sub, undefined]);
      expect(second.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-q-2', outcome: { type: 'success' }, result: { text: 'They are Ada.' } });
      const answers = existsSync(marker) ? readFileSync(marker, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as unknown) : [];
      expect(answers).toEqual([{ action: 'accept', content: { name: 'Ada', age: 36, team: 'blue' } }]);
    },
    SLOW,
  );
});
