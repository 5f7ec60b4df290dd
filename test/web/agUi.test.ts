import { afterEach, describe, expect, it } from 'vitest';
import { HttpAgent } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';
import type { BaseEvent } from '@ag-ui/core';
import { scriptedModel } from '../../src/testing/index.ts';
import { createAgUiHandler } from '../../src/web/agUi.ts';
import { stopTrackedAgents, trackAgent } from '../support/agents.ts';
import { add, serve, type Served } from './support.ts';

let served: Served | undefined;
afterEach(async () => {
  stopTrackedAgents();
  await served?.close();
  served = undefined;
});

describe('AG-UI through the web handler', () => {
  it('streams a run HttpAgent reassembles: text, a tool call with its arguments and result, valid events', async () => {
    const model = scriptedModel([{ text: 'Let me add.', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: 'The sum is 3.' }]);
    const agent = trackAgent({ model: { provider: model, stream: true }, tools: [add()] });
    served = await serve(createAgUiHandler(agent));
    const client = new HttpAgent({ url: served.url, threadId: 'thread-1', initialMessages: [{ id: 'u1', role: 'user', content: 'What is 1 + 2?' }] });
    const events: BaseEvent[] = [];
    await client.runAgent({ runId: 'run-agui-1' }, { onEvent: ({ event }) => void events.push(event) });
    for (const event of events) EventSchemas.parse(event);
    console.log(JSON.stringify(client.messages, null, 1));
    console.log(events.map((e) => e.type).join(' '));
  });
});
