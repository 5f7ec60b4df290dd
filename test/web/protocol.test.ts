/**
 * The protocol seam: a second wire protocol plugs into the same handler with its own start
 * body, events, framing and headers, and gets routing, ids and reconnects for free.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { createRunHandler } from '../../src/web/handler.ts';
import type { WebProtocol } from '../../src/web/protocol.ts';
import { WebRequestError } from '../../src/web/errors.ts';
import { stopTrackedAgents, trackAgent } from '../support/agents.ts';
import { post, serve, type Served } from './support.ts';

let served: Served | undefined;
afterEach(async () => {
  stopTrackedAgents();
  await served?.close();
  served = undefined;
});

/** A protocol of one event per entry, `{ kind }`, each behind a place it cannot fill. */
const kinds: WebProtocol<{ kind: string }> = {
  parseStart(body) {
    const parsed = z.object({ prompt: z.string().min(1), id: z.string() }).safeParse(body);
    if (!parsed.success) throw new WebRequestError(400, 'send { prompt, id }');
    return { task: parsed.data.prompt, history: [], runId: parsed.data.id, threadId: 'none' };
  },
  encoder: () => ({
    encode: (entry: JournalEntry) => [undefined, { kind: entry.event.type }],
    failure: (message) => ({ kind: `failed: ${message}` }),
  }),
  frame: (event) => `data: ${JSON.stringify(event)}\n\n`,
  headers: { 'x-kinds-stream': 'v1' },
};

describe('a protocol of its own', () => {
  it('gets its body read, its events framed and its headers sent, with ids that skip the places it left empty', async () => {
    const agent = trackAgent({ model: scriptedModel([{ text: 'hello' }]) });
    const entries: JournalEntry[] = [];
    agent.events$.subscribe((entry) => entries.push(entry));
    served = await serve(createRunHandler(agent, kinds));

    const response = await post(served.url, { prompt: 'Say hello', id: 'run-kinds' });
    expect(response.headers.get('x-kinds-stream')).toBe('v1');
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const blocks = (await response.text()).split('\n\n').filter((b) => b !== '');

    expect(blocks).toEqual(entries.map((e) => `id: ${e.sequence}.1\ndata: ${JSON.stringify({ kind: e.event.type })}`));
    expect(blocks.at(-1)).toContain('run.terminated');
    expect((await post(served.url, { prompt: '' })).status).toBe(400);
  });
});
