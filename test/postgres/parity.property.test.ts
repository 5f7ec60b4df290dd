/**
 * A durable run reads like the same run made in memory: for random run shapes — turns of
 * parallel tool calls, a call that waits for a human's approval, and a worker that stops in the
 * middle (its calls handed to another) — the journal has the same event types in the same order.
 */
import fc from 'fast-check';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, defineTool, type Agent, type AgentRun } from '../../src/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { createPostgresRuntime, runWorker, type DurableWorker, type PostgresRuntime } from '../../src/postgres/index.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';

const missing = postgresMissing();

interface Shape {
  /** Tool calls made side by side, per turn. */
  readonly turns: readonly number[];
  /** The turn whose first call waits for a human's approval, if any. */
  readonly approval: number | undefined;
  /** Stop the worker (and start another) once this many tool calls have been made, if set. */
  readonly stopAfter: number | undefined;
}

const shapes = fc
  .array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 4 })
  .chain((turns) =>
    fc.record({
      turns: fc.constant(turns),
      approval: fc.option(fc.integer({ min: 0, max: turns.length - 1 }), { nil: undefined }),
      stopAfter: fc.option(fc.integer({ min: 1, max: turns.reduce((a, b) => a + b, 0) }), { nil: undefined }),
    }),
  );

let made = 0;
const work = defineTool({
  name: 'work',
  description: 'Do a step of work.',
  input: z.object({ n: z.number() }),
  execute: async ({ n }) => {
    made++;
    await new Promise((resolve) => setTimeout(resolve, 5));
    return `worked ${n}`;
  },
});
const deploy = defineTool({ name: 'deploy', description: 'Deploy.', input: z.object({ n: z.number() }), requiresConfirmation: true, execute: ({ n }) => `deployed ${n}` });

/** An agent whose model plays the shape: turn by turn (counted by its own replies so far), then the answer. */
function shapedAgent(id: string, shape: Shape, runtime?: PostgresRuntime): Agent {
  const model = scriptedModel(
    (request) => {
      const turn = request.messages.filter((message) => message.role === 'assistant').length;
      const calls = shape.turns[turn];
      if (calls === undefined) return { text: `done after ${turn} turns` };
      return {
        toolCalls: Array.from({ length: calls }, (_, i) => ({ id: `t${turn}c${i}`, name: i === 0 && shape.approval === turn ? 'deploy' : 'work', arguments: { n: turn * 10 + i } })),
      };
    },
    { recordCalls: false },
  );
  return createAgent({ id, model, tools: [work, deploy], ...(runtime === undefined ? {} : { runtime }) });
}

/** Start a run, approve it when it waits, and return its journal's event types. */
async function play(run: AgentRun, entries: () => Promise<{ event: { type: string } }[]>): Promise<string[]> {
  let approved = false;
  const approving = setInterval(() => {
    if (!approved && run.phase() === 'awaitingHuman') {
      approved = true;
      run.approve();
    }
  }, 10);
  try {
    const result = await run.result;
    expect(result.status).toBe('done');
  } finally {
    clearInterval(approving);
  }
  return (await entries()).map((entry) => entry.event.type);
}

describe.skipIf(missing !== '')('a durable run and the same run in memory', () => {
  let runtime: PostgresRuntime;
  let worker: DurableWorker;

  beforeAll(async () => {
    runtime = createPostgresRuntime({ connectionString: await freshDatabase('parity'), migrate: true, poolSize: 12 });
    await runtime.migrate();
    worker = await runWorker({ runtime, concurrency: 4, pollIntervalMs: 100 });
  });
  afterAll(async () => {
    await worker?.stop();
    await runtime?.close();
  });

  it('journal the same event types in the same order, whatever the shape of the run', { timeout: 300_000 }, async () => {
    let k = 0;
    await fc.assert(
      fc.asyncProperty(shapes, async (shape) => {
        const n = k++;
        const local = shapedAgent(`local_${n}`, shape);
        const inMemory = local.start('Work through the plan.');
        const expected = await play(inMemory, async () => local.journal.entries(inMemory.runId));

        const durable = shapedAgent(`durable_${n}`, shape, runtime);
        made = 0;
        const run = durable.start('Work through the plan.');
        let restarting: Promise<void> | undefined;
        const watching = setInterval(() => {
          if (shape.stopAfter !== undefined && restarting === undefined && made >= shape.stopAfter) {
            // The worker stops mid-run, handing its calls over; another takes the run on.
            restarting = (async () => {
              const stopping = worker;
              worker = await runWorker({ runtime, concurrency: 4, pollIntervalMs: 100 });
              await stopping.stop();
            })();
          }
        }, 5);
        try {
          const actual = await play(run, () => runtime.journal(run.runId));
          expect(actual).toEqual(expected);
        } finally {
          clearInterval(watching);
          await restarting;
        }
      }),
      { numRuns: 12 },
    );
  });
});
