/** A page that cannot set Last-Event-ID reconnects with `?after=<id>` and gets exactly the events after it. */
import { afterEach, describe, expect, it } from 'vitest';
import { scriptedModel } from '../../src/testing/index.ts';
import { createAgUiHandler } from '../../src/web/agUi.ts';
import { stopTrackedAgents, trackAgent } from '../support/agents.ts';
import { EventReader, post, runInput, serve, type Served } from './support.ts';

const servers: Served[] = [];
afterEach(async () => {
  stopTrackedAgents();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('reconnecting with ?after=', () => {
  it("gives the events after the one the query names, as Last-Event-ID does; a bad cursor is refused with 400", async () => {
    const text = 'Forty two, after some thought.';
    const agent = trackAgent({ model: { provider: scriptedModel([{ text, chunks: text.split(' ').map((w, i, all) => (i < all.length - 1 ? `${w} ` : w)) }]), stream: true } });
    const server = await serve(createAgUiHandler(agent));
    servers.push(server);
    const whole = await new EventReader(await post(server.url, runInput('Think', 'run-after'))).rest();
    const cut = Math.floor(whole.length / 2);
    const cursor = whole[cut - 1]?.id as string;

    const byQuery = await new EventReader(await fetch(`${server.url}/runs/run-after/stream?after=${encodeURIComponent(cursor)}`)).rest();
    const byHeader = await new EventReader(await fetch(`${server.url}/runs/run-after/stream`, { headers: { 'last-event-id': cursor } })).rest();
    expect(byQuery).toEqual(whole.slice(cut));
    expect(byQuery).toEqual(byHeader);

    const refused = await fetch(`${server.url}/runs/run-after/stream?after=nope`);
    expect(refused.status).toBe(400);
  });
});
