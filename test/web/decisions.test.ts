/**
 * A page's approval, rejection or cancellation reaches runs the handler did not start: one the
 * same agent runs in this process (started in code), and one waiting in a file store that
 * another process started (resumed here, as `actorloop approve` does). Unknown runs stay 404;
 * runs not waiting, 409.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createFileStore } from '../../src/persistence/fileStore.ts';
import { createAgUiHandler } from '../../src/web/agUi.ts';
import type { WebHandlerOptions } from '../../src/web/handler.ts';
import type { Agent } from '../../src/agent/types.ts';
import type { AgentConfig } from '../../src/agent/config.ts';
import { stopTrackedAgents, trackAgent } from '../support/agents.ts';
import { adderConfig } from './fixtures/adder.ts';
import { EventReader, post, serve, type Served } from './support.ts';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

const servers: Served[] = [];
const dirs: string[] = [];
afterEach(async () => {
  stopTrackedAgents();
  await Promise.all(servers.splice(0).map((s) => s.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** An agent whose runs call `add` (held for a human), then answer with the sum. */
const confirmingAgent = (extra: Partial<AgentConfig> = {}): Agent => trackAgent({ ...adderConfig(), ...extra });

/** Another process starts run `runId` in the store at `dir` and exits while it waits for a human. */
async function leftWaitingByAnotherProcess(dir: string, runId: string): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(FIXTURES, 'waitingRun.ts'), dir, runId], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  expect({ code, out }).toEqual({ code: 0, out: 'waiting\n' });
}

async function handlerOn(agent: Agent, options: WebHandlerOptions = {}): Promise<string> {
  const server = await serve(createAgUiHandler(agent, options));
  servers.push(server);
  return server.url;
}

const message = async (response: Response): Promise<string> => ((await response.json()) as { error: { message: string } }).error.message;

async function waitsForHuman(run: { phase(): string }): Promise<void> {
  await expect.poll(() => run.phase(), { timeout: 10_000 }).toBe('awaitingHuman');
}

describe('decisions on runs the handler did not start', () => {
  it('approve a run the same agent started in code in this process', async () => {
    const agent = confirmingAgent();
    const url = await handlerOn(agent);
    const run = agent.start('Add 1 and 2', { runId: 'run-code' });
    await waitsForHuman(run);

    const refused = await post(`${url}/runs/run-code/approve`, { toolCallIds: ['c9'] });
    expect(refused.status).toBe(409);
    expect(await message(refused)).toMatch(/c9 of run run-code are not waiting; waiting: c1/);
    const approved = await post(`${url}/runs/run-code/approve`, {});
    expect(approved.status).toBe(202);
    expect(await approved.json()).toEqual({ runId: 'run-code', action: 'approve', toolCallIds: ['c1'] });
    expect(await run.result).toMatchObject({ text: 'The sum is 3.' });
    // Ended: nothing to decide any more.
    expect((await post(`${url}/runs/run-code/reject`, {})).status).toBe(409);
  });

  it('cancel a run the same agent started in code; a run nothing here knows stays 404', async () => {
    const agent = confirmingAgent();
    const url = await handlerOn(agent);
    const run = agent.start('Add 1 and 2', { runId: 'run-code-cancel' });
    await waitsForHuman(run);
    expect((await post(`${url}/runs/run-code-cancel/cancel`, { reason: 'not needed' })).status).toBe(202);
    expect(await run.settled).toMatchObject({ reason: 'cancelled' });
    expect((await post(`${url}/runs/nobody/approve`, {})).status).toBe(404);
  });

  it('approve a run waiting in the file store that another process started, which goes on here to its end', { timeout: 30_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'actorloop-web-decide-'));
    dirs.push(dir);
    await leftWaitingByAnotherProcess(dir, 'run-stored');
    const store = createFileStore({ dir });
    expect(await store.getRun('run-stored')).toMatchObject({ status: 'awaiting_human' });

    // Another process serves the page: the same agent, the same store.
    const url = await handlerOn(confirmingAgent({ persistence: { store: createFileStore({ dir }) } }), { store, pollIntervalMs: 100 });
    const wrong = await post(`${url}/runs/run-stored/approve`, { toolCallIds: ['c9'] });
    expect(wrong.status).toBe(409);
    expect(await message(wrong)).toMatch(/waiting: c1/);
    const approved = await post(`${url}/runs/run-stored/approve`, {});
    expect(approved.status).toBe(202);
    expect(await approved.json()).toEqual({ runId: 'run-stored', action: 'approve', toolCallIds: ['c1'] });

    // The run's first response ends at its wait (the interrupt); the page streams on after it.
    const first = await new EventReader(await fetch(`${url}/runs/run-stored/stream`)).rest();
    expect(first.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt' } });
    const events = await new EventReader(await fetch(`${url}/runs/run-stored/stream`, { headers: { 'last-event-id': first.at(-1)?.id ?? '' } })).rest();
    expect(events.find((e) => e.data.type === 'TOOL_CALL_RESULT')?.data.content).toBe('3');
    expect(events.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', result: { text: 'The sum is 3.' } });
    expect(await store.getRun('run-stored')).toMatchObject({ status: 'done' });
    const again = await post(`${url}/runs/run-stored/approve`, {});
    expect(again.status).toBe(409);
    expect(await message(again)).toMatch(/has ended/);
  });

  it('refuses a stored run that still runs in another process, and one that another live process holds while it waits', { timeout: 30_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'actorloop-web-decide-'));
    dirs.push(dir);
    const first = confirmingAgent({ persistence: { store: createFileStore({ dir }) } });
    const run = first.start('Add 1 and 2', { runId: 'run-elsewhere' });
    await waitsForHuman(run);
    const store = createFileStore({ dir });
    const url = await handlerOn(confirmingAgent({ persistence: { store: createFileStore({ dir }) } }), { store });
    const held = await post(`${url}/runs/run-elsewhere/approve`, {});
    expect(held.status).toBe(409);
    expect(await message(held)).toMatch(/another process that still holds it/);
    // The run was not touched: its own process still decides it.
    run.approve();
    expect(await run.result).toMatchObject({ text: 'The sum is 3.' });
    expect((await post(`${url}/runs/run-elsewhere/approve`, {})).status).toBe(409);
  });
});
