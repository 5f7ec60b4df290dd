/**
 * A worker's step goes on until its run rests. While the run works with nothing asked for (a slow
 * hook, a strategy's slow init), the step waits for the run's next change instead of turning the
 * event loop until then.
 */
import type * as timers from 'node:timers/promises';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAgent, defineTool } from '../../src/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { inProcess, type InProcess } from './fixtures/agents.ts';

/** The step's turns of the event loop, counted where it takes them. */
const turns = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:timers/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof timers>();
  return {
    ...actual,
    setImmediate: <T>(value?: T) => {
      turns.count++;
      return actual.setImmediate(value);
    },
  };
});

const missing = postgresMissing();

/** Turns of this test's own: a step that polls takes about one per each. */
async function turnsOfOurOwn(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe.skipIf(missing !== '')('a step whose run is at work', () => {
  let setup: InProcess | undefined;

  beforeAll(async () => {
    setup = await inProcess(await freshDatabase('rest'), 4);
  });
  afterAll(async () => {
    await setup?.close();
  });

  it('waits for the run while a slow beforeModelCall hook holds it, without polling, and goes on once it returns', async () => {
    if (setup === undefined) throw new Error('no setup');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let hookCalls = 0;
    let held = false;
    const noop = defineTool({ name: 'noop', description: 'Do nothing.', input: z.object({}), execute: () => 'ok' });
    const model = scriptedModel((request) => (request.messages.some((message) => message.role === 'tool') ? { text: 'done' } : { toolCalls: [{ id: 'n1', name: 'noop', arguments: {} }] }), {
      recordCalls: false,
    });
    const agent = createAgent({
      id: 'hooked',
      model,
      tools: [noop],
      runtime: setup.runtime,
      hooks: {
        // The second model call waits on a service: here, on the test.
        beforeModelCall: async () => {
          if (++hookCalls === 2) {
            held = true;
            await gate;
          }
        },
      },
    });
    const running = agent.run('Call noop, then answer.', { runId: 'run_hooked' });
    await expect.poll(() => held, { timeout: 20_000 }).toBe(true);
    const before = turns.count;
    await turnsOfOurOwn(500);
    const whileHeld = turns.count - before;
    release();
    expect(await running).toMatchObject({ status: 'done', text: 'done' });
    // A step that turned the loop until the run rested would have taken about 500 turns meanwhile.
    expect(whileHeld).toBeLessThan(10);
    expect(hookCalls).toBe(2);
  }, 30_000);

  it("waits for a strategy run while its init holds it, without polling, and goes on once it returns", async () => {
    if (setup === undefined) throw new Error('no setup');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    const model = scriptedModel(() => ({ text: 'unused' }), { recordCalls: false });
    const subAgent = createAgent({ id: 'unused_branch', model, runtime: setup.runtime });
    const slow = setup.runtime.strategy('slow_init', {
      strategy: {
        name: 'slow_init',
        init: async () => {
          held = true;
          await gate;
          return {};
        },
        step: (state) => ({ kind: 'done', answer: 'decided', state }),
        aggregate: (_thoughts, state) => ({ kind: 'done', answer: 'decided', state }),
      },
      subAgent,
    });
    const running = slow.run('Decide.');
    await expect.poll(() => held, { timeout: 20_000 }).toBe(true);
    const before = turns.count;
    await turnsOfOurOwn(500);
    const whileHeld = turns.count - before;
    release();
    expect(await running).toMatchObject({ status: 'done', text: 'decided' });
    expect(whileHeld).toBeLessThan(10);
  }, 30_000);
});
