/**
 * A durable run commits a tool's result with the step that asks for the next model call, so whoever
 * follows the run has the result before that call streams; a worker that stops during the call leaves
 * the run to another, whose replay journals each entry once, as the same agent in memory does.
 */
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, defineTool } from '../../src/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { createPostgresRuntime, runWorker, type DurableWorker, type PostgresRuntime } from '../../src/postgres/index.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';

const missing = postgresMissing();

describe.skipIf(missing !== '')("a durable run's tool result", () => {
  let runtime: PostgresRuntime;
  const workers: DurableWorker[] = [];

  beforeAll(async () => {
    runtime = createPostgresRuntime({ connectionString: await freshDatabase('result_order'), migrate: true, poolSize: 4 });
    await runtime.migrate();
  });
  afterAll(async () => {
    for (const worker of workers) await worker.stop();
    await runtime?.close();
  });

  it('is committed before the next model call is made, and a worker that stops during that call leaves a journal with each entry once', { timeout: 60_000 }, async () => {
    const hooks = { beforeModelCall: () => undefined, afterToolCall: () => undefined, onTurnStart: () => undefined, onTurnEnd: () => undefined };
    let made = 0;
    const echo = defineTool({ name: 'echo', description: 'Echo.', input: z.object({ v: z.string() }), execute: ({ v }) => (made++, v) });
    const answered = (request: { messages: readonly { role: string }[] }) => request.messages.some((m) => m.role === 'tool');
    // The first worker's call with the tool's result never answers: it is in flight when the worker stops.
    let holding = true;
    let reached!: () => void;
    const inFlight = new Promise<void>((resolve) => (reached = resolve));
    const model = scriptedModel(
      (request) => {
        if (!answered(request)) return { toolCalls: [{ id: 'e1', name: 'echo', arguments: { v: 'x' } }] };
        if (!holding) return { text: 'echoed' };
        reached();
        return { text: 'never', delayMs: 60_000 };
      },
      { recordCalls: false },
    );
    const durable = createAgent({ id: 'ordered', model, tools: [echo], hooks, runtime });
    workers.push(await runWorker({ runtime, concurrency: 2, pollIntervalMs: 100 }));
    const run = durable.start('Echo x.', { runId: 'run-result-order' });
    await inFlight;
    // The step that asked for the call committed the tool's result with it.
    const committed = (await runtime.journal(run.runId)).map((entry) => entry.event.type);
    expect(committed).toContain('observations.collected');
    expect(committed.indexOf('observations.collected')).toBeGreaterThan(committed.indexOf('reasoning.completed'));
    await workers.shift()?.stop();
    holding = false;
    workers.push(await runWorker({ runtime, concurrency: 2, pollIntervalMs: 100 }));
    expect((await run.result).text).toBe('echoed');
    expect(made).toBe(1);
    const local = createAgent({ id: 'ordered_in_memory', model: scriptedModel((request) => (answered(request) ? { text: 'echoed' } : { toolCalls: [{ id: 'e1', name: 'echo', arguments: { v: 'x' } }] })), tools: [echo], hooks });
    const here = await local.run('Echo x.');
    const types = (entries: readonly { event: { type: string } }[]) => entries.map((entry) => entry.event.type);
    expect(types(await runtime.journal(run.runId))).toEqual(types(local.journal.entries(here.runId)));
  });
});
