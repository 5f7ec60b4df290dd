/**
 * A run that failed resumably and was resumed is streamed to its final end: the end it came
 * back from is left out, from this process's journal and from the store alike.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthenticationError } from '../../src/inference/errors.ts';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { createAgUiHandler } from '../../src/web/agUi.ts';
import { stopTrackedAgents, trackAgent } from '../support/agents.ts';
import { add, EventReader, serve, type Served } from './support.ts';

const servers: Served[] = [];
const dirs: string[] = [];
afterEach(async () => {
  stopTrackedAgents();
  await Promise.all(servers.splice(0).map((s) => s.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A run that adds, then fails on a refused key (resumable), resumed by the same agent to its answer. */
async function resumedRun() {
  const dir = mkdtempSync(join(tmpdir(), 'actorloop-web-resumed-'));
  dirs.push(dir);
  const model = scriptedModel([
    { text: 'Adding.', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
    { error: () => new AuthenticationError('key revoked') },
    { text: 'The sum is 3.' },
  ]);
  const agent = trackAgent({ id: 'resumer', model, tools: [add()], persistence: { store: createFileStore({ dir }) } });
  const failed = await agent.start('Add 1 and 2', { runId: 'run-back' }).settled;
  expect(failed).toMatchObject({ status: 'failed', resumable: true });
  const resumed = await agent.resume('run-back').settled;
  expect(resumed).toMatchObject({ status: 'done', text: 'The sum is 3.' });
  return { agent, dir };
}

const types = (events: readonly { data: { type: string; name?: unknown } }[]) => events.map((e) => (e.data.type === 'CUSTOM' ? `CUSTOM ${String(e.data.name)}` : e.data.type));

describe('a run resumed after a resumable failure, streamed', () => {
  it('goes on past the end it came back from to the final one, from the journal of the process that resumed it', { timeout: 20_000 }, async () => {
    const { agent } = await resumedRun();
    const server = await serve(createAgUiHandler(agent));
    servers.push(server);
    const events = await new EventReader(await fetch(`${server.url}/runs/run-back/stream`)).rest();
    const seen = types(events);
    expect(seen).toContain('CUSTOM actorloop.run.resumed');
    expect(seen).not.toContain('RUN_ERROR');
    expect(seen.filter((type) => type === 'TOOL_CALL_RESULT')).toHaveLength(1);
    expect(events.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', result: { reason: 'final_answer', text: 'The sum is 3.' } });
  });

  it('is served the same from the store by another process, and a page that saw the failure gets what came after it', { timeout: 20_000 }, async () => {
    const { agent, dir } = await resumedRun();
    const here = await serve(createAgUiHandler(agent));
    const elsewhere = await serve(createAgUiHandler(trackAgent({ id: 'resumer', model: scriptedModel([]) }), { store: createFileStore({ dir }), pollIntervalMs: 100 }));
    servers.push(here, elsewhere);
    const local = await new EventReader(await fetch(`${here.url}/runs/run-back/stream`)).rest();
    const stored = await new EventReader(await fetch(`${elsewhere.url}/runs/run-back/stream`)).rest();
    expect(stored.map((e) => e.id)).toEqual(local.map((e) => e.id));
    expect(types(stored)).toEqual(types(local));

    // The page that watched the run fail was sent the failure's events: it reconnects after them.
    const store = createFileStore({ dir });
    const failure = store.readJournal('run-back').entries.find((e) => e.event.type === 'run.terminated');
    const after = await new EventReader(await fetch(`${elsewhere.url}/runs/run-back/stream`, { headers: { 'last-event-id': `${failure?.sequence}.99` } })).rest();
    expect(types(after)[0]).toBe('CUSTOM actorloop.run.resumed');
    expect(after.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', result: { text: 'The sum is 3.' } });
  });
});
