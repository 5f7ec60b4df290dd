/**
 * The web handler on a durable agent: a run kept in PostgreSQL and advanced by workers is
 * streamed over AG-UI, a page that reconnects (to another server process) gets exactly the
 * events it missed, and an approval from the page reaches the run waiting in the database.
 */
import { z } from 'zod';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HttpAgent } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';
import type { BaseEvent } from '@ag-ui/core';
import { createAgent, defineTool, type Agent } from '../../src/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { createPostgresRuntime, runWorker, type PostgresRuntime } from '../../src/postgres/index.ts';
import { createAgUiHandler } from '../../src/web/agUi.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { inProcess, type InProcess } from './fixtures/agents.ts';
import { EventReader, post, runInput, serve, type Served, type SseEvent } from '../web/support.ts';

const missing = postgresMissing();

/** The agent every process defines alike: it asks to deploy (held for a human), then says it shipped. */
function deployer(runtime: PostgresRuntime): Agent {
  const deploy = defineTool({ name: 'deploy', description: 'Deploy.', input: z.object({ env: z.string() }), requiresConfirmation: true, execute: ({ env }) => `deployed to ${env}` });
  const model = scriptedModel(
    (request) => (request.messages.some((m) => m.role === 'tool') ? { text: 'Shipped to production.' } : { text: 'Deploying.', toolCalls: [{ id: 'd1', name: 'deploy', arguments: { env: 'prod' } }] }),
    { recordCalls: false },
  );
  return createAgent({ id: 'web_deployer', model, tools: [deploy], runtime });
}

describe.skipIf(missing !== '')('the web handler on a durable PostgreSQL agent', () => {
  let setup: InProcess | undefined;
  let runtime: PostgresRuntime;
  /** Another server process: its own runtime (connections, notices), the same database. */
  let elsewhere: PostgresRuntime;
  const servers: Served[] = [];

  beforeAll(async () => {
    setup = await inProcess(await freshDatabase('web'), 2);
    ({ runtime } = setup);
    elsewhere = createPostgresRuntime({ connectionString: setup.url, poolSize: 3 });
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    await elsewhere?.close();
    await setup?.close();
  });

  /** One agent per runtime (a runtime binds an agent id once), each behind a handler of its own. */
  let agents: { readonly here: Agent; readonly there: Agent } | undefined;
  const handlers = async () => {
    agents ??= { here: deployer(runtime), there: deployer(elsewhere) };
    const here = await serve(createAgUiHandler(agents.here, { runtime, pollIntervalMs: 100 }));
    const there = await serve(createAgUiHandler(agents.there, { runtime: elsewhere, pollIntervalMs: 100 }));
    servers.push(here, there);
    return { here: here.url, there: there.url };
  };

  it('streams a run to HttpAgent, which ends at the interrupt; the page resumes it through another process and the workers finish it', { timeout: 60_000 }, async () => {
    const { here, there } = await handlers();
    const client = new HttpAgent({ url: here, threadId: 'thread-db', initialMessages: [{ id: 'u1', role: 'user', content: 'Deploy it.' }] });
    const events: BaseEvent[] = [];
    const onEvent = ({ event }: { event: BaseEvent }): void => {
      EventSchemas.parse(event);
      events.push(event);
    };
    await client.runAgent({ runId: 'run-web-db' }, { onEvent });
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt', interrupts: [{ id: 'run-web-db/d1', toolCallId: 'd1' }] } });
    expect(await runtime.getRun('run-web-db')).toMatchObject({ status: 'awaiting_human' });

    // The page's next request reaches another process: its resume entry approves the call in the database.
    client.url = there;
    await client.runAgent({ runId: 'run-web-db-2', resume: [{ interruptId: 'run-web-db/d1', status: 'resolved', payload: { approved: true } }] }, { onEvent });

    const of = (type: string) => events.filter((e) => e.type === type) as (BaseEvent & Record<string, unknown>)[];
    expect(of('TOOL_CALL_ARGS').map((e) => e.delta)).toEqual(['{"env":"prod"}']);
    expect(of('TOOL_CALL_RESULT').map((e) => e.content)).toEqual(['deployed to prod']);
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-web-db-2', outcome: { type: 'success' }, result: { reason: 'final_answer', text: 'Shipped to production.' } });
    expect(client.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Shipped to production.' });
    expect(await runtime.getRun('run-web-db')).toMatchObject({ status: 'done' });

    // Ended: nothing to decide; a run the database does not have: unknown.
    expect((await post(`${there}/runs/run-web-db/approve`, {})).status).toBe(409);
    expect((await post(`${there}/runs/run-nowhere/approve`, {})).status).toBe(404);
  });

  it('a page that reconnects to another process mid-run gets exactly the events it missed, then the rest once approved', { timeout: 60_000 }, async () => {
    const { here, there } = await handlers();
    const first = new EventReader(await post(here, runInput('Deploy it.', 'run-web-db-reconnect')));
    // The connection drops just after the call was announced (events read past it count as lost).
    const cut = await first.until((e) => e.data.type === 'TOOL_CALL_START');
    const received: SseEvent[] = first.events.slice(0, first.events.indexOf(cut) + 1);
    await first.drop();

    const resumed = new EventReader(await fetch(`${there}/runs/run-web-db-reconnect/stream`, { headers: { 'last-event-id': received.at(-1)?.id ?? '' } }));
    // This response ends at the wait, with the interrupt outcome.
    received.push(...(await resumed.rest()));
    expect(received.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt' } });
    // Not waiting for other calls than its own: refused, untouched.
    expect((await post(`${there}/runs/run-web-db-reconnect/approve`, { toolCallIds: ['d9'] })).status).toBe(409);
    expect((await post(`${there}/runs/run-web-db-reconnect/approve`, { toolCallIds: ['d1'] })).status).toBe(202);
    // The page streams the run on from after the interrupt.
    received.push(...(await new EventReader(await fetch(`${there}/runs/run-web-db-reconnect/stream`, { headers: { 'last-event-id': received.at(-1)?.id ?? '' } })).rest()));

    // Unbroken: the first response, to the interrupt, then the run streamed on after it.
    const toWait = await new EventReader(await fetch(`${here}/runs/run-web-db-reconnect/stream`)).rest();
    const unbroken = [...toWait, ...(await new EventReader(await fetch(`${here}/runs/run-web-db-reconnect/stream`, { headers: { 'last-event-id': toWait.at(-1)?.id ?? '' } })).rest())];
    const threadless = ({ id, data }: SseEvent) => ({ id, data: { ...data, threadId: undefined } });
    expect(received.map(threadless)).toEqual(unbroken.map(threadless));
    expect(new Set(received.map((e) => e.id)).size).toBe(received.length);
    expect(received.find((e) => e.data.type === 'TOOL_CALL_RESULT')?.data.content).toBe('deployed to prod');
    expect(received.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', result: { text: 'Shipped to production.' } });
  });
  it("streams a run this process began on to its end while another process's worker advances it", { timeout: 60_000 }, async () => {
    const { here } = await handlers();
    const first = await new EventReader(await post(here, runInput('Deploy it.', 'run-web-db-moved'))).rest();
    expect(first.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt' } });
    expect(agents?.here.journal.firstSequence('run-web-db-moved')).toBe(0);
    // From now on only the other process has a worker: the run's next steps never reach this process's journal.
    await setup?.worker.stop();
    const moved = await runWorker({ runtime: elsewhere, concurrency: 1, pollIntervalMs: 200 });
    try {
      expect((await post(`${here}/runs/run-web-db-moved/approve`, { toolCallIds: ['d1'] })).status).toBe(202);
      const after = await new EventReader(await fetch(`${here}/runs/run-web-db-moved/stream`, { headers: { 'last-event-id': first.at(-1)?.id ?? '' } })).rest();
      expect(after.find((e) => e.data.type === 'TOOL_CALL_RESULT')?.data.content).toBe('deployed to prod');
      expect(after.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', result: { text: 'Shipped to production.' } });
      // The call ran in the other process: this one's journal never saw it.
      expect(agents?.here.journal.entries('run-web-db-moved').some((e) => e.event.type === 'tool.finished')).toBe(false);
    } finally {
      await moved.stop();
    }
  });
  it('follows a long run by reading each journal entry about once, not the whole journal at every step', { timeout: 60_000 }, async () => {
    const ticks = 20;
    const tick = defineTool({ name: 'tick', description: 'Tick.', input: z.object({ n: z.number() }), execute: ({ n }) => `tick ${n}` });
    const model = scriptedModel(
      (request) => {
        const done = request.messages.filter((m) => m.role === 'tool').length;
        return done < ticks ? { toolCalls: [{ id: `t${done}`, name: 'tick', arguments: { n: done } }] } : { text: `ticked ${done}` };
      },
      { recordCalls: false },
    );
    const agent = createAgent({ id: 'web_ticker', model, tools: [tick], runtime, limits: { maxIterations: ticks + 1 } });
    let read = 0;
    const counting = {
      getRun: (runId: string) => runtime.getRun(runId),
      approve: (runId: string, ids?: readonly string[]) => runtime.approve(runId, ids),
      reject: (runId: string, reason?: string, ids?: readonly string[]) => runtime.reject(runId, reason, ids),
      cancel: (runId: string, reason?: string) => runtime.cancel(runId, reason),
      journal: async (runId: string, options?: { readonly after?: number }) => {
        const entries = await runtime.journal(runId, options);
        read += entries.length;
        return entries;
      },
    };
    const served = await serve(createAgUiHandler(agent, { runtime: counting, pollIntervalMs: 100 }));
    servers.push(served);
    const { url } = served;
    // Its own worker: an earlier test stopped this process's.
    const worker = await runWorker({ runtime, concurrency: 1, pollIntervalMs: 200 });
    const events = await new EventReader(await post(url, runInput('Tick.', 'run-web-db-long'))).rest().finally(() => worker.stop());
    expect(events.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', result: { text: `ticked ${ticks}` } });
    expect(events.filter((e) => e.data.type === 'TOOL_CALL_RESULT')).toHaveLength(ticks);
    const journal = await runtime.journal('run-web-db-long');
    expect(journal.length).toBeGreaterThan(ticks * 4);
    // Each step's new entries once, and a few read twice where a wake and a poll met: not the journal so far at each of the run's steps.
    expect(read).toBeLessThan(2 * journal.length);
    // What a reader that has the first entries asks for: the rest, exactly.
    expect(await runtime.journal('run-web-db-long', { after: 9 })).toEqual(journal.slice(10));
  });
});
