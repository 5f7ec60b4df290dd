/**
 * A durable strategy's budget counts on the database's clock, from its row's `created_at`: a worker
 * whose own clock is an hour off neither ends it at once nor lets it run past its budget.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { strategies } from '../../src/index.ts';
import type { PostgresRuntime } from '../../src/postgres/index.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { gatedWaiter, inProcess, type InProcess } from './fixtures/agents.ts';

const missing = postgresMissing();
const HOUR = 3_600_000;

describe.skipIf(missing !== '')("a durable strategy's budget, with the worker's clock far off the database's", () => {
  let setup: InProcess | undefined;
  let runtime: PostgresRuntime;

  beforeAll(async () => {
    setup = await inProcess(await freshDatabase('strategy_clock'), 4);
    runtime = setup.runtime;
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  afterAll(async () => {
    await setup?.close();
  });

  /** Only `Date` is off: timers, and so the worker's polling and the database's wakes, run as they do. */
  const workerClockOff = (by: number): void => {
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    vi.setSystemTime(Date.now() + by);
  };

  it('is not spent at once when the worker\'s clock runs an hour ahead', async () => {
    const { agent, release, waiting } = gatedWaiter(runtime, 'clock_ahead_waiter');
    const vote = runtime.strategy('vote_clock_ahead', { strategy: strategies.vote({ samples: 2 }), subAgent: agent, timeoutMs: 10 * 60_000 });
    workerClockOff(HOUR);
    const voting = vote.run('Wait twice.', { runId: 'run_clock_ahead' });
    voting.catch(() => undefined);
    let settled: unknown = 'running';
    voting.then(
      () => (settled = 'answered'),
      (error: unknown) => (settled = error),
    );
    try {
      await expect.poll(() => (waiting() === 2 ? 'both branches waiting' : settled), { timeout: 20_000 }).toBe('both branches waiting');
      // Both branches are under way and the strategy rests: an hour past a ten-minute budget on the worker's clock, seconds on the database's.
      expect((await runtime.getRun('run_clock_ahead'))?.status).not.toBe('failed');
      release();
      const result = await voting;
      expect(result.status).toBe('done');
    } finally {
      release();
    }
  }, 60_000);

  it('ends when its budget is spent on the database\'s clock though the worker\'s runs an hour behind', async () => {
    const { agent, release, waiting } = gatedWaiter(runtime, 'clock_behind_waiter');
    const vote = runtime.strategy('vote_clock_behind', { strategy: strategies.vote({ samples: 2 }), subAgent: agent, timeoutMs: 1_500 });
    workerClockOff(-HOUR);
    const voting = vote.run('Wait twice.', { runId: 'run_clock_behind' });
    voting.catch(() => undefined);
    try {
      await expect.poll(waiting, { timeout: 20_000 }).toBe(2);
      const ended = await Promise.race([voting.then(() => 'answered', (error: unknown) => error), new Promise((resolve) => setTimeout(() => resolve('still running'), 30_000))]);
      expect(ended).toMatchObject({ code: 'strategy_timeout' });
    } finally {
      release();
    }
  }, 60_000);
});
