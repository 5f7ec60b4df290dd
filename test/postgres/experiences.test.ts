/**
 * Experiences on durable agents: a durable run is shown the experiences relevant to its task,
 * and its outcome counts for them exactly once, whichever worker ends it, however many steps it
 * took, and even when the step that ends it is tried again.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from '../../src/index.ts';
import { createMemoryExperienceStore, type ExperienceStore } from '../../src/experiences/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import type { Agent } from '../../src/agent/types.ts';
import { createPostgresRuntime, runWorker, type PostgresRuntime } from '../../src/postgres/index.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { inProcess, type InProcess } from './fixtures/agents.ts';

const missing = postgresMissing();

const seeded = (): ExperienceStore =>
  createMemoryExperienceStore([
    { condition: 'numbers are noted one by one', rule: 'note them in increasing order', confidence: 0.8 },
    { condition: 'a deploy to production is requested', rule: 'ask for approval first', confidence: 0.9 },
  ]);

/** Answers by conversation progress (any worker can make any call): `calls` notes, then the answer. */
const noter = (calls: number) =>
  scriptedModel((request) => {
    const done = request.messages.filter((message) => message.role === 'tool').length;
    if (done >= calls) return { text: `noted ${done}` };
    return { toolCalls: [{ id: `c${done}`, name: 'note', arguments: { n: done } }] };
  });

/** A note tool; `hold(n)` makes its first call for `n` wait until its worker stops (its signal aborts). */
function noteTool(executions: number[], hold?: { readonly n: number; reached: () => void }) {
  let holding = hold;
  return defineTool({
    name: 'note',
    description: 'Note a number.',
    idempotent: true,
    input: z.object({ n: z.number().int() }),
    async execute({ n }, context) {
      executions.push(n);
      if (holding !== undefined && holding.n === n) {
        const { reached } = holding;
        holding = undefined;
        reached();
        await new Promise((_resolve, reject) => context.signal.addEventListener('abort', () => reject(new Error('the worker stopped')), { once: true }));
      }
      return `noted ${n}`;
    },
  });
}

function durableAgent(runtime: PostgresRuntime, model: ReturnType<typeof noter>, store: ExperienceStore, tool: ReturnType<typeof noteTool>, learner?: ReturnType<typeof scriptedModel>): Agent {
  return createAgent({ id: 'noter', model, tools: [tool], runtime, memory: { experiences: { store, ...(learner === undefined ? {} : { model: learner }) } } });
}

const TASK = 'Numbers are noted one by one: note twelve numbers.';

describe.skipIf(missing !== '')('experiences on a durable agent', () => {
  let pool: pg.Pool;
  let url: string;
  let setup: InProcess | undefined;

  beforeAll(async () => {
    url = await freshDatabase('experiences');
    setup = await inProcess(url, 4);
    ({ pool } = setup);
  });
  afterAll(async () => {
    await setup?.close();
  });

  it('a run whose worker stops mid-way is shown the relevant experiences, and the worker that ends it counts its outcome once; learning from it adds once', async () => {
    if (setup === undefined) throw new Error('no setup');
    const store = seeded();
    const [shown] = store.list().filter((e) => e.condition.startsWith('numbers'));
    const model = noter(12);
    const executions: number[] = [];
    let reached!: () => void;
    const held = new Promise<void>((resolve) => (reached = resolve));
    const tool = noteTool(executions, { n: 2, reached });
    const learner = scriptedModel([{ output: { candidates: [{ condition: 'twelve numbers are noted', rule: 'count them first', evidence: [], scope: 'global', tool: null, confidence: 0.6 }] } }]);
    const agent = durableAgent(setup.runtime, model, store, tool, learner);
    const run = agent.start(TASK);

    // The first worker stops while the third note is being made; a second one, in effect another process, takes the run over.
    await held;
    await setup.worker.stop();
    const other = createPostgresRuntime({ connectionString: url, poolSize: 6 });
    durableAgent(other, model, store, noteTool(executions));
    const worker = await runWorker({ runtime: other, concurrency: 4, pollIntervalMs: 200 });
    try {
      const result = await run.result;
      expect(result.text).toBe('noted 12');
      // Every model request of the run (made by either worker) carries the experience before the task.
      expect(model.calls).toHaveLength(13);
      for (const call of model.calls) expect(call.messages[0]?.content).toContain('When numbers are noted one by one, note them in increasing order');
      expect(model.calls[0]?.messages[0]?.content).not.toContain('deploy');
      // Steps of both workers; the one that ended the run restored it from a checkpoint, after the hydrate reply.
      const workers = await pool.query<{ n: number }>('SELECT count(DISTINCT worker)::int AS n FROM actorloop.steps WHERE actor_id = $1', [result.runId]);
      expect(workers.rows[0]?.n).toBe(2);
      const lines = await pool.query<{ line: string }>(`SELECT line FROM actorloop.log WHERE actor_id = $1 AND (line LIKE '%"kind":"hydrate"%' OR line LIKE '%"kind":"checkpoint"%') ORDER BY seq`, [result.runId]);
      expect(lines.rows.map((row) => (JSON.parse(row.line) as { kind: string }).kind)).toEqual(['hydrate', 'checkpoint']);
      expect(JSON.parse(lines.rows[0]?.line ?? '{}')).toMatchObject({ output: { experiences: [shown?.id] } });
      // Counted once, for the experience shown only.
      expect(store.get(shown?.id ?? '')).toMatchObject({ usageCount: 1, successCount: 1, countedRunIds: [result.runId] });
      expect(store.list().filter((e) => e.usageCount > 0)).toHaveLength(1);
      // Nothing is learned by the workers; the caller's one learn() adds one candidate from the run's trace.
      expect(store.size).toBe(2);
      const learned = await agent.experiences?.learn(result.runId);
      expect(learned?.map((e) => e.sourceRunIds)).toEqual([[result.runId]]);
      expect(store.size).toBe(3);
    } finally {
      await worker.stop();
      await other.close();
    }
  }, 60_000);

  it('the step that ends a run, tried again after its write failed with the outcome already counted, does not count it again', async () => {
    const inner = seeded();
    const [shown] = inner.list().filter((e) => e.condition.startsWith('numbers'));
    let recorded = 0;
    const store: ExperienceStore = Object.assign(Object.create(inner) as ExperienceStore, {
      recordOutcome(...args: Parameters<ExperienceStore['recordOutcome']>) {
        recorded++;
        return inner.recordOutcome(...args);
      },
    });
    // The first write of the run's end fails as a lost connection does (a sequence: a rolled-back write does not undo it).
    await pool.query(`CREATE SEQUENCE fail_once;
      CREATE FUNCTION fail_once() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval('fail_once') = 1 THEN RAISE EXCEPTION 'the connection was lost' USING ERRCODE = '08006'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER fail_once BEFORE INSERT ON actorloop.log FOR EACH ROW
      WHEN (NEW.actor_id = 'run_retried' AND NEW.line LIKE '%"kind":"end"%') EXECUTE FUNCTION fail_once();`);
    const runtime = createPostgresRuntime({ connectionString: url, poolSize: 6 });
    const agent = createAgent({ id: 'retried', model: noter(2), tools: [noteTool([])], runtime, memory: { experiences: { store } } });
    const worker = await runWorker({ runtime, concurrency: 4, pollIntervalMs: 200 });
    try {
      const result = await agent.run(TASK, { runId: 'run_retried' });
      expect(result.text).toBe('noted 2');
      // The run ended twice in its worker (the step was tried again), and was counted once.
      expect(recorded).toBe(2);
      expect(inner.get(shown?.id ?? '')).toMatchObject({ usageCount: 1, successCount: 1, countedRunIds: [result.runId] });
      const ends = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM actorloop.log WHERE actor_id = $1 AND line LIKE '%"kind":"end"%'`, [result.runId]);
      expect(ends.rows[0]?.n).toBe(1);
    } finally {
      await worker.stop();
      await runtime.close();
      await pool.query('DROP TRIGGER fail_once ON actorloop.log; DROP FUNCTION fail_once(); DROP SEQUENCE fail_once;');
    }
  }, 60_000);
});
