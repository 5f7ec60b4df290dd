/**
 * A run lives on in the worker that makes its calls: the steps after its first go on from where
 * it was instead of rebuilding it from its log, and anything that may have moved the run (an
 * event for it, another writer) sends the worker back to what is committed.
 */
import pg from 'pg';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAgent, defineTool } from '../../src/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { writeStep } from '../../src/postgres/stepWrite.ts';
import type { EffectRequest } from '../../src/postgres/durable.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { counterAgent, inProcess, type InProcess } from './fixtures/agents.ts';

const missing = postgresMissing();

describe.skipIf(missing !== '')('durable runs alive in their worker', () => {
  let pool: pg.Pool;
  let setup: InProcess | undefined;

  beforeAll(async () => {
    const url = await freshDatabase('live');
    // The server's row counts then measure what a query asks for, not a scan the planner prefers on tables this small.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`ALTER DATABASE "${admin.database ?? ''}" SET enable_seqscan = off`);
    await admin.end();
    setup = await inProcess(url, 4);
    ({ pool } = setup);
  });
  afterAll(async () => {
    await setup?.close();
  });

  /** Rows of the log table the server has read so far, once its counts settle. */
  const logRowsRead = async (): Promise<number> => {
    const read = async () =>
      (await pool.query<{ n: number }>("SELECT (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::float AS n FROM pg_stat_user_tables WHERE schemaname = 'actorloop' AND relname = 'log'"))
        .rows[0]?.n ?? 0;
    // A server process reports its counts within a second or so of going idle: read until they settle.
    let last = await read();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const now = await read();
      if (now === last) return now;
      last = now;
    }
  };

  it('a run whose calls its worker makes reads none of its log back: each step goes on from the last', async () => {
    if (setup === undefined) throw new Error('no setup');
    const agent = counterAgent(setup.runtime, pool, { id: 'alive', calls: 8 });
    const before = await logRowsRead();
    const result = await agent.run('Record eight numbers.', { runId: 'run_alive' });
    expect(result.text).toBe('recorded 8');
    const length = (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM actorloop.log WHERE actor_id = 'run_alive'")).rows[0]?.n ?? 0;
    const steps = (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM actorloop.steps WHERE actor_id = 'run_alive'")).rows[0]?.n ?? 0;
    expect(steps).toBe(10);
    // Rebuilding the run at each of its 10 steps would read its log again each time: several times
    // its length. Under load one read of it may happen (a wake that arrives twice rebuilds the run once).
    expect(await logRowsRead()).toBeLessThan(before + 2 * length);
  }, 60_000);

  it('an event for a run while its worker makes its calls is applied at once, and the run goes on from its log', async () => {
    if (setup === undefined) throw new Error('no setup');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held = 0;
    let executions = 0;
    const hold = defineTool({
      name: 'hold',
      description: 'Hold, then answer.',
      input: z.object({ n: z.number() }),
      execute: async ({ n }) => {
        executions++;
        if (n === 0) {
          held++;
          await gate;
        }
        return `held ${n}`;
      },
    });
    const model = scriptedModel(
      (request) => {
        const done = request.messages.filter((message) => message.role === 'tool').length;
        return done >= 2 ? { text: `held ${done}` } : { toolCalls: [{ id: `h${done}`, name: 'hold', arguments: { n: done } }] };
      },
      { recordCalls: false },
    );
    const agent = createAgent({ id: 'woken', model, tools: [hold], runtime: setup.runtime });
    const running = agent.run('Hold twice.', { runId: 'run_woken' });
    await expect.poll(() => held, { timeout: 20_000 }).toBe(1);
    // A wake, as any event for the run sends one: another step of it in this worker while the call is in flight.
    await pool.query("SELECT graphile_worker.add_job('actorloop_wake', json_build_object('actor', 'run_woken'), job_key := 'wake:run_woken')");
    await expect
      .poll(async () => (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM actorloop.steps WHERE actor_id = 'run_woken'")).rows[0]?.n, { timeout: 20_000 })
      .toBe(2);
    release();
    expect(await running).toMatchObject({ status: 'done', text: 'held 2' });
    expect(executions).toBe(2);
    const types = (await setup.runtime.journal('run_woken')).map((entry) => entry.event.type);
    expect(types.filter((type) => type === 'tool.finished')).toHaveLength(2);
    expect(types.filter((type) => type === 'run.terminated')).toHaveLength(1);
  }, 60_000);

  it('a long run rebuilt from its log reads its last checkpoint and what followed, not the whole log', async () => {
    if (setup === undefined) throw new Error('no setup');
    const ITERATIONS = 60;
    let sent = 0;
    const count = defineTool({ name: 'count', description: 'Count.', input: z.object({ n: z.number() }), execute: ({ n }) => `counted ${n}` });
    const send = defineTool({ name: 'send', description: 'Send.', input: z.object({}), requiresConfirmation: true, execute: () => `sent #${++sent}` });
    const model = scriptedModel(
      (request) => {
        const done = request.messages.filter((message) => message.role === 'tool').length;
        if (done < ITERATIONS) return { toolCalls: [{ id: `c${done}`, name: 'count', arguments: { n: done } }] };
        return done === ITERATIONS ? { toolCalls: [{ id: 's', name: 'send', arguments: {} }] } : { text: `done after ${done}` };
      },
      { recordCalls: false },
    );
    const agent = createAgent({ id: 'long', model, tools: [count, send], runtime: setup.runtime, limits: { maxIterations: ITERATIONS + 5 } });
    const running = agent.run('Count, then send.', { runId: 'run_long' });
    await expect.poll(async () => (await setup?.runtime.getRun('run_long'))?.status, { timeout: 60_000 }).toBe('awaiting_human');
    const row = await pool.query<{ log_length: number; checkpoint_at: number | null }>("SELECT log_length, checkpoint_at FROM actorloop.actors WHERE id = 'run_long'");
    const { log_length: length, checkpoint_at: checkpointAt } = row.rows[0] ?? { log_length: 0, checkpoint_at: null };
    expect(checkpointAt).not.toBeNull();
    const before = await logRowsRead();
    // The decision's step rebuilds the run: from its checkpoint at iteration 60 (and the one it builds on), then what followed.
    await setup.runtime.approve('run_long');
    expect(await running).toMatchObject({ status: 'done', text: `done after ${ITERATIONS + 1}` });
    expect(sent).toBe(1);
    const read = (await logRowsRead()) - before;
    expect(length).toBeGreaterThan(200);
    // What followed the checkpoint is a few rows; the whole log is over 200 (other reads of the database may land in the count too).
    expect(length - (checkpointAt ?? 0)).toBeLessThan(10);
    expect(read).toBeLessThan(length / 4);
  }, 120_000);

  it("a run's first step reads nothing of its log back: no step wrote to it yet", async () => {
    if (setup === undefined) throw new Error('no setup');
    const agent = counterAgent(setup.runtime, pool, { id: 'first', calls: 0 });
    // Statements, counted where they are sent: the server's table counters take late reports from every test's runs.
    const sent = vi.spyOn(pg.Client.prototype, 'query');
    try {
      expect((await agent.run('Record nothing.', { runId: 'run_first' })).text).toBe('recorded 0');
      const reads = sent.mock.calls.filter(([query]) => (query as { readonly name?: string }).name === 'actorloop_load_run');
      // The second step goes on from the run alive in its worker.
      expect((await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM actorloop.steps WHERE actor_id = 'run_first'")).rows[0]?.n).toBe(2);
      expect(reads).toHaveLength(0);
    } finally {
      sent.mockRestore();
    }
  });

  it('a step that finds its run moved on writes nothing of what it went on to do', async () => {
    await pool.query("INSERT INTO actorloop.actors (id, kind, agent_id, status, task, options) VALUES ('run_moved', 'agent', 'nobody', 'running', 'x', '{}')");
    await pool.query("UPDATE actorloop.actors SET version = 5 WHERE id = 'run_moved'");
    const write = {
      actorId: 'run_moved',
      agentId: 'nobody',
      workerId: 'worker_test',
      from: 0,
      lines: ['{"kind":"x"}'],
      calls: [['k1', { kind: 'model', agentId: 'nobody', request: { messages: [] } }]] satisfies [string, EffectRequest][],
      marks: [false],
      events: 0,
      startedAt: new Date(),
      status: 'running',
      result: undefined,
      made: new Map(),
    };
    // Version 5 moves on to 6; a step that started from 3 finds it moved.
    expect(await writeStep(pool, { ...write, version: 4 })).toEqual({ updated: false, claimed: [] });
    const rows = async (table: string) => (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM actorloop.${table} WHERE actor_id = 'run_moved'`)).rows[0]?.n;
    expect([await rows('log'), await rows('effects'), await rows('steps')]).toEqual([0, 0, 0]);
    expect(await writeStep(pool, { ...write, version: 6 })).toEqual({ updated: true, claimed: [{ key: 'k1', begun: false }] });
    expect([await rows('log'), await rows('effects'), await rows('steps')]).toEqual([1, 1, 1]);
  });
});
