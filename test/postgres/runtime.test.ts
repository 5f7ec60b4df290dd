import type pg from 'pg';
import { z } from 'zod';
import { createAgent, createAgentSystem, defineTool, gates, strategies } from '../../src/index.ts';
import { RunCancelledError } from '../../src/errors.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresRuntime } from '../../src/postgres/index.ts';
import { engineOf } from '../../src/postgres/runtime.ts';
import { makeCall } from '../../src/postgres/effects.ts';
import { EffectRequest } from '../../src/postgres/durable.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { counterAgent, gatedWaiter as gatedWaiterOf, inProcess, type InProcess, voteStrategy } from './fixtures/agents.ts';

const missing = postgresMissing();
if (missing !== '') console.info(missing);

describe.skipIf(missing !== '')('the PostgreSQL runtime, in one process', () => {
  let pool: pg.Pool;
  let runtime: PostgresRuntime;
  let setup: InProcess | undefined;

  beforeAll(async () => {
    // Serves every agent created with `runtime` in this process, whenever it was created.
    setup = await inProcess(await freshDatabase('runtime'), 4);
    ({ pool, runtime } = setup);
  });
  afterAll(async () => {
    await setup?.close();
  });

  it('runs an agent to its answer: the worker makes each model and tool call once, one step per model call, the tool calls between them made at once', async () => {
    const agent = counterAgent(runtime, pool, { calls: 3 });
    const result = await agent.run('Record three numbers.');
    expect(result.status).toBe('done');
    expect(result.text).toBe('recorded 3');
    const effects = await pool.query<{ kind: string; n: string }>("SELECT kind, count(*) AS n FROM actorloop.effects WHERE actor_id = $1 GROUP BY kind ORDER BY kind", [result.runId]);
    expect(effects.rows).toEqual([{ kind: 'model', n: '4' }, { kind: 'tool', n: '3' }]);
    const executions = await pool.query('SELECT count(*)::int AS n FROM test_executions');
    expect(executions.rows[0]).toEqual({ n: 3 });
    // The first step asks for a model call; each later one records its outcome and the tool calls it led to (idempotent: made at once), and asks for the next.
    const steps = await pool.query<{ n: number; events: number }>('SELECT count(*)::int AS n, sum(events)::int AS events FROM actorloop.steps WHERE actor_id = $1', [result.runId]);
    expect(steps.rows[0]).toEqual({ n: 5, events: 0 });
    const journal = await runtime.journal(result.runId);
    expect(journal.filter((entry) => entry.event.type === 'run.terminated')).toHaveLength(1);
    expect(journal.filter((entry) => entry.event.type === 'tool.finished')).toHaveLength(3);
    // Read like a run made in one go: in order, without gaps, each tool started once, no entry per step.
    expect(journal.map((entry) => entry.sequence)).toEqual(journal.map((_, i) => i));
    expect(journal.filter((entry) => entry.event.type === 'tool.started')).toHaveLength(3);
    expect(journal.filter((entry) => entry.event.type === 'run.resumed')).toHaveLength(0);
    // Its trace reads from the database: four model calls, three tool calls and their results.
    const trace = await agent.traces.get(result.runId);
    expect(trace?.steps.filter((step) => step.type === 'llm_call')).toHaveLength(4);
    expect(trace?.steps.filter((step) => step.type === 'tool_result')).toHaveLength(3);
    expect((await agent.traces.list()).map((summary) => summary.id)).toContain(result.runId);
    // The same entries, kind for kind, as the same agent run in memory.
    const local = counterAgent(undefined, pool, { id: 'counter_in_memory', calls: 3 });
    const inMemory = await local.run('Record three numbers.');
    expect(journal.map((entry) => entry.event.type)).toEqual(local.journal.entries(inMemory.runId).map((entry) => entry.event.type));
  });

  it('asks for a call of a tool that must not run twice in a step of its own, marked begun, before making it', async () => {
    let charged = 0;
    const charge = defineTool({ name: 'charge', description: 'Charge once.', input: z.object({ n: z.number() }), idempotent: false, execute: ({ n }) => `charged ${n} (#${++charged})` });
    const model = scriptedModel(
      (request) => {
        const done = request.messages.filter((message) => message.role === 'tool').length;
        return done >= 2 ? { text: `charged ${done}` } : { toolCalls: [{ id: `p${done}`, name: 'charge', arguments: { n: done } }] };
      },
      { recordCalls: false },
    );
    const agent = createAgent({ id: 'charger', model, tools: [charge], runtime });
    const result = await agent.run('Charge twice.');
    expect(result.text).toBe('charged 2');
    expect(charged).toBe(2);
    // 3 model calls and 2 tool calls: a step each, and the first.
    const steps = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM actorloop.steps WHERE actor_id = $1', [result.runId]);
    expect(steps.rows[0]?.n).toBe(6);
    const calls = await pool.query<{ status: string }>("SELECT status FROM actorloop.effects WHERE actor_id = $1 AND kind = 'tool'", [result.runId]);
    expect(calls.rows).toEqual([{ status: 'done' }, { status: 'done' }]);
  });

  it('a long run writes checkpoints, its steps restore from the last one, and it journals as the same run in memory', async () => {
    const agent = counterAgent(runtime, pool, { id: 'long', calls: 22 });
    const result = await agent.run('Record twenty-two numbers.');
    expect(result.text).toBe('recorded 22');
    const checkpoints = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM actorloop.log WHERE actor_id = $1 AND line LIKE '{"v":6,"kind":"checkpoint",%'`, [result.runId]);
    expect(checkpoints.rows[0]?.n).toBe(2);
    const journal = await runtime.journal(result.runId);
    expect(journal.map((entry) => entry.sequence)).toEqual(journal.map((_, i) => i));
    const local = counterAgent(undefined, pool, { id: 'long_in_memory', calls: 22 });
    const inMemory = await local.run('Record twenty-two numbers.');
    expect(journal.map((entry) => entry.event.type)).toEqual(local.journal.entries(inMemory.runId).map((entry) => entry.event.type));
  });

  it('runs a strategy whose branches are durable runs of their own, and its scorer calls as calls of its own', async () => {
    const agent = counterAgent(runtime, pool, { id: 'sampler', calls: 1 });
    const vote = voteStrategy(runtime, agent);
    const result = await vote.run('Record one number.');
    expect(result.status).toBe('done');
    expect(result.text).toBe('recorded 1');
    expect(result.thoughts).toHaveLength(3);
    const children = await pool.query<{ id: string; status: string }>('SELECT id, status FROM actorloop.actors WHERE parent_id = $1 ORDER BY id', [result.runId]);
    expect(children.rows.map((row) => row.status)).toEqual(['done', 'done', 'done']);
    expect(children.rows.map((row) => row.id)).toEqual([0, 1, 2].map((i) => `${result.runId}-r1-b${i}`));
    const own = await pool.query<{ kind: string; n: number }>('SELECT kind, count(*)::int AS n FROM actorloop.effects WHERE actor_id = $1 GROUP BY kind ORDER BY kind', [result.runId]);
    expect(own.rows).toEqual([{ kind: 'child', n: 3 }, { kind: 'model', n: 3 }]);
    const journal = await runtime.journal(result.runId);
    const types = journal.map((entry) => entry.event.type);
    expect(types.filter((type) => type === 'branch.finished')).toHaveLength(3);
    expect(types.filter((type) => type === 'run.terminated')).toHaveLength(1);
    expect(journal.map((entry) => entry.sequence)).toEqual(journal.map((_, i) => i));
  });

  it('a run that waits for a human goes on when the runtime is told the decision, from any process', async () => {
    let sent = 0;
    const send = defineTool({ name: 'send', description: 'Send the mail.', input: z.object({}), requiresConfirmation: true, execute: () => `sent #${++sent}` });
    const model = scriptedModel(
      (request) => {
        const reply = request.messages.findLast((message) => message.role === 'tool');
        return reply === undefined ? { toolCalls: [{ id: 's1', name: 'send', arguments: {} }] } : { text: `tool said: ${String(reply.content)}` };
      },
      { recordCalls: false },
    );
    const agent = createAgent({ id: 'sender', model, tools: [send], runtime });
    const waiting = async (runId: string) => (await runtime.getRun(runId))?.status;

    const approved = agent.run('Send it.', { runId: 'run_approve' });
    await expect.poll(() => waiting('run_approve'), { timeout: 10_000 }).toBe('awaiting_human');
    expect(sent).toBe(0);
    // The wait is in the journal while it lasts, for whoever watches the run.
    expect((await runtime.journal('run_approve')).map((entry) => entry.event.type)).toContain('human.awaiting');
    await runtime.approve('run_approve');
    expect(await approved).toMatchObject({ status: 'done', text: 'tool said: sent #1' });

    const rejected = agent.run('Send it.', { runId: 'run_reject' });
    await expect.poll(() => waiting('run_reject'), { timeout: 10_000 }).toBe('awaiting_human');
    await runtime.reject('run_reject', 'not on a Sunday');
    const result = await rejected;
    expect(result.text).toContain('not on a Sunday');
    expect(sent).toBe(1);
    await expect(runtime.approve('run_approve')).rejects.toThrow(/not waiting for a human \(it is done\)/);
  });

  it("a run its gate asks a human about waits, with the gate's reason in its journal, and goes on when approved", async () => {
    let sent = 0;
    const send = defineTool({ name: 'send', description: 'Send the mail.', input: z.object({}), execute: () => `sent #${++sent}` });
    const model = scriptedModel(
      (request) => {
        const reply = request.messages.findLast((message) => message.role === 'tool');
        return reply === undefined ? { toolCalls: [{ id: 's1', name: 'send', arguments: {} }] } : { text: `tool said: ${String(reply.content)}` };
      },
      { recordCalls: false },
    );
    const gate = gates.fromFunction('ask-sends', () => ({ kind: 'confirm', reason: 'Mail goes out only when a person agrees.' }));
    const agent = createAgent({ id: 'gated_sender', model, tools: [send], runtime, policy: { gate } });
    const run = agent.run('Send it.', { runId: 'run_gate_confirm' });
    await expect.poll(async () => (await runtime.getRun('run_gate_confirm'))?.status, { timeout: 10_000 }).toBe('awaiting_human');
    expect(sent).toBe(0);
    const journal = (await runtime.journal('run_gate_confirm')).map((entry) => entry.event);
    expect(journal).toContainEqual({ type: 'policy.evaluated', toolCallId: 's1', tool: 'send', decision: 'confirm', reason: 'Mail goes out only when a person agrees.' });
    await runtime.approve('run_gate_confirm');
    expect(await run).toMatchObject({ status: 'done', text: 'tool said: sent #1' });
  });

  it('keeps the agent\'s secrets out of every table: task, calls, results and journal', async () => {
    const secret = 'hunter2-token-4711';
    const lookup = defineTool({ name: 'lookup', description: 'Look up.', input: z.object({ q: z.string() }), execute: ({ q }) => `found ${q} and ${secret}` });
    const model = scriptedModel(
      (request) => {
        const reply = request.messages.findLast((message) => message.role === 'tool');
        const task = String(request.messages.findLast((message) => message.role === 'user')?.content ?? '');
        return reply === undefined ? { toolCalls: [{ id: 'l1', name: 'lookup', arguments: { q: task } }] } : { text: `answer: ${String(reply.content)}` };
      },
      { recordCalls: false },
    );
    const agent = createAgent({ id: 'keeper', model, tools: [lookup], policy: { redact: { secrets: [secret] } }, runtime });
    const result = await agent.run(`Find ${secret}`);
    expect(result.status).toBe('done');
    const dump = await pool.query<{ text: string }>(
      `SELECT string_agg(t, ' ') AS text FROM (
         SELECT task || coalesce(result::text, '') || options::text AS t FROM actorloop.actors WHERE id = $1
         UNION ALL SELECT line FROM actorloop.log WHERE actor_id = $1
         UNION ALL SELECT request::text || coalesce(outcome::text, '') FROM actorloop.effects WHERE actor_id = $1) AS all_text`,
      [result.runId],
    );
    expect(dump.rows[0]?.text.length).toBeGreaterThan(100);
    expect(dump.rows[0]?.text).not.toContain(secret);
  });

  it('an agent system over the runtime: each task and each delegation is a durable run of its own', async () => {
    const system = createAgentSystem({ runtime });
    system.spawn('researcher', { model: scriptedModel(() => ({ text: 'the actor model dates from 1973' }), { recordCalls: false }) });
    const delegate = system.delegateTool('researcher');
    const writerModel = scriptedModel(
      (request) => {
        const reply = request.messages.findLast((message) => message.role === 'tool');
        return reply === undefined ? { toolCalls: [{ id: 'd1', name: delegate.name, arguments: { task: 'When is the actor model from?' } }] } : { text: `wrote: ${String(reply.content)}` };
      },
      { recordCalls: false },
    );
    system.spawn('writer', { model: writerModel, tools: [delegate] });
    const result = await system.ask('writer', 'One line on the actor model.', { timeoutMs: 30_000 });
    expect(result.text).toContain('1973');
    const runs = await pool.query<{ agent_id: string; status: string }>("SELECT agent_id, status FROM actorloop.actors WHERE agent_id IN ('writer', 'researcher') ORDER BY agent_id");
    expect(runs.rows).toEqual([
      { agent_id: 'researcher', status: 'done' },
      { agent_id: 'writer', status: 'done' },
    ]);
    // The delegating call made again, as after its worker died mid-call: it finds the run it started, and starts no second one.
    const call = await pool.query<{ key: string; request: unknown }>(
      "SELECT e.key, e.request FROM actorloop.effects e JOIN actorloop.actors a ON a.id = e.actor_id WHERE a.agent_id = 'writer' AND e.kind = 'tool'",
    );
    const { key, request } = call.rows[0]!;
    const parsed = EffectRequest.parse(request);
    if (parsed.kind === 'child') throw new Error('expected the delegating tool call');
    const { outcome: again } = await makeCall(engineOf(runtime), { key, request: parsed, begun: false }, new AbortController().signal, 'run_writer');
    expect(again).toEqual({ ok: true, value: 'the actor model dates from 1973' });
    const researched = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM actorloop.actors WHERE agent_id = 'researcher'");
    expect(researched.rows[0]?.n).toBe(1);
    system.stopAll();
  });

  const gatedWaiter = (id: string) => gatedWaiterOf(runtime, id);

  it('cancels a durable run, and the branches of a cancelled strategy run with it', async () => {
    const { agent, release, waiting } = gatedWaiter('waiter');
    const status = async (runId: string) => (await runtime.getRun(runId))?.status;
    const single = agent.run('Wait.', { runId: 'run_cancel_one' });
    await expect.poll(waiting, { timeout: 10_000 }).toBeGreaterThan(0);
    await runtime.cancel('run_cancel_one', 'changed my mind');
    await expect(single).rejects.toThrow(RunCancelledError);

    const vote = runtime.strategy('vote_waiters', { strategy: strategies.vote({ samples: 2 }), subAgent: agent });
    const voting = vote.run('Wait twice.', { runId: 'run_cancel_vote' });
    voting.catch(() => undefined);
    await expect.poll(() => status('run_cancel_vote-r1-b1'), { timeout: 10_000 }).toBe('running');
    await runtime.cancel('run_cancel_vote');
    await expect(voting).rejects.toMatchObject({ code: 'strategy_cancelled' });
    await expect.poll(async () => [await status('run_cancel_vote-r1-b0'), await status('run_cancel_vote-r1-b1')], { timeout: 10_000 }).toEqual(['cancelled', 'cancelled']);
    await expect(runtime.cancel('run_cancel_vote')).rejects.toThrow(/already ended \(cancelled\)/);
    release();
  });

  it("ends a durable strategy with strategy_timeout once its budget, counted from the run's start across its steps, is spent while its branches still run, and stops them", async () => {
    const { agent, release, waiting } = gatedWaiter('slow_waiter');
    const status = async (runId: string) => (await runtime.getRun(runId))?.status;
    // Each step of the strategy is a replay of a few milliseconds; its branches wait on the gate far past the budget.
    const vote = runtime.strategy('vote_budget', { strategy: strategies.vote({ samples: 2 }), subAgent: agent, timeoutMs: 1_500 });
    const voting = vote.run('Wait twice.', { runId: 'run_budget' });
    voting.catch(() => undefined);
    try {
      await expect.poll(waiting, { timeout: 10_000 }).toBe(2);
      const ended = await Promise.race([voting.then(() => 'answered', (error: unknown) => error), new Promise((resolve) => setTimeout(() => resolve('still running'), 30_000))]);
      expect(ended).toMatchObject({ code: 'strategy_timeout' });
      const journal = await runtime.journal('run_budget');
      expect(journal.at(-1)?.event).toMatchObject({ type: 'run.terminated', reason: 'timeout' });
      expect(journal.map((entry) => entry.sequence)).toEqual(journal.map((_, i) => i));
      await expect.poll(async () => [await status('run_budget-r1-b0'), await status('run_budget-r1-b1')], { timeout: 10_000 }).toEqual(['cancelled', 'cancelled']);
    } finally {
      release();
    }
  }, 60_000);

  it('keeps no job queue per run: runs are woken by keyed jobs, and none is left once they end', async () => {
    const agent = counterAgent(runtime, pool, { id: 'tidy', calls: 1 });
    await Promise.all([agent.run('One.'), agent.run('Two.')]);
    const queues = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM graphile_worker._private_job_queues');
    expect(queues.rows[0]?.n).toBe(0);
    const jobs = async () => (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE key LIKE 'wake:run_%'")).rows[0]?.n;
    await expect.poll(jobs, { timeout: 10_000 }).toBe(0);
  });

  it('refuses a second run under a run id already taken, naming it, and leaves the first run as it was', async () => {
    const agent = counterAgent(runtime, pool, { id: 'twice', calls: 1 });
    expect(await agent.run('Record one number.', { runId: 'run_taken' })).toMatchObject({ status: 'done', text: 'recorded 1' });
    const before = await pool.query("SELECT task, status, version FROM actorloop.actors WHERE id = 'run_taken'");
    await expect(agent.run('Record another number.', { runId: 'run_taken' })).rejects.toMatchObject({ name: 'ConfigurationError', code: 'configuration', message: expect.stringContaining('run_taken already exists') });
    expect((await pool.query("SELECT task, status, version FROM actorloop.actors WHERE id = 'run_taken'")).rows).toEqual(before.rows);
    // No wake was queued for the refused one.
    expect((await pool.query("SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE key = 'wake:run_taken'")).rows[0]).toEqual({ n: 0 });
  });

  it('a run queued with limits keeps them in the worker, and fails with the same typed error as in memory', async () => {
    const agent = counterAgent(runtime, pool, { id: 'limited', calls: 3 });
    const error = await agent.run('Record three numbers.', { limits: { maxIterations: 1 } }).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: 'max_iterations' });
    expect(error).toMatchObject({ result: { status: 'failed', reason: 'max_iterations', iterations: 1 } });
  });

  it('journals each hook and each call once, as the same agent in memory does', async () => {
    const hooks = { beforeModelCall: () => undefined, beforeToolCall: () => undefined, afterToolCall: () => undefined, onTurnStart: () => undefined };
    const model = scriptedModel(
      (request) => (request.messages.filter((m) => m.role === 'tool').length >= 2 ? { text: 'two' } : { toolCalls: [{ id: `e${request.messages.length}`, name: 'echo', arguments: { v: 'x' } }] }),
      { recordCalls: false },
    );
    const echo = defineTool({ name: 'echo', description: 'Echo.', input: z.object({ v: z.string() }), execute: ({ v }) => v });
    const durable = createAgent({ id: 'hooked', model, tools: [echo], hooks, runtime });
    const local = createAgent({ id: 'hooked_in_memory', model, tools: [echo], hooks });
    const remote = await durable.run('Echo twice.');
    const here = await local.run('Echo twice.');
    const types = (entries: readonly { event: { type: string } }[]) => entries.map((entry) => entry.event.type);
    const journal = await runtime.journal(remote.runId);
    expect(types(journal).filter((type) => type === 'hook.completed').length).toBeGreaterThanOrEqual(7);
    expect(types(journal)).toEqual(types(local.journal.entries(here.runId)));
  });
  it('runs a tool whose arguments hold "kind": "journal", "event" or "call.started" to its answer: a log line is known by its own kind, not by text inside it', { timeout: 30_000 }, async () => {
    for (const kind of ['journal', 'event', 'call.started']) {
      const file = defineTool({ name: 'file', description: 'File an item.', input: z.object({ kind: z.string() }), execute: ({ kind }) => `filed a ${kind}` });
      const model = scriptedModel((request) => (request.messages.some((m) => m.role === 'tool') ? { text: 'filed' } : { toolCalls: [{ id: 'f1', name: 'file', arguments: { kind } }] }), { recordCalls: false });
      const agent = createAgent({ id: `filer_${kind.replace('.', '_')}`, model, tools: [file], runtime });
      const result = await agent.run('File it.');
      expect(result.status).toBe('done');
      expect(result.messages.find((message) => message.role === 'tool')?.content).toBe(`filed a ${kind}`);
    }
  });
  it("makes a durable agent's model calls with the reasoning effort it was given", { timeout: 30_000 }, async () => {
    const model = scriptedModel(() => ({ text: 'thought hard' }));
    const agent = createAgent({ id: 'thinker', model: { provider: model, reasoningEffort: 'high' }, runtime });
    const result = await agent.run('Think.');
    expect(result.status).toBe('done');
    expect(model.calls.map((request) => request.reasoningEffort)).toEqual(['high']);
  });
  it('runs to its answer when a task, tool arguments, a tool result or the answer hold a NUL character or half an emoji: each is stored as U+FFFD instead of the step failing on every retry', { timeout: 60_000 }, async () => {
    const cases = [
      { name: 'nul_result', task: 'Echo.', argument: 'x', output: 'a\u0000b', answer: 'ok' },
      { name: 'half_emoji_result', task: 'Echo.', argument: 'x', output: 'ab\ud83d', answer: 'ok' },
      { name: 'nul_argument', task: 'Echo.', argument: 'a\u0000b', output: 'x', answer: 'ok' },
      { name: 'half_emoji_argument', task: 'Echo.', argument: '\ude00b', output: 'x', answer: 'ok' },
      { name: 'nul_task_and_answer', task: 'Echo\u0000.', argument: 'x', output: 'x', answer: 'o\u0000k' },
    ];
    for (const [i, { name, task, argument, output, answer }] of cases.entries()) {
      const seen: string[] = [];
      // Every other case through a tool that must not run twice: its outcome is written by another statement.
      const echo = defineTool({ name: 'echo', description: 'Echo.', input: z.object({ s: z.string() }), idempotent: i % 2 === 0, execute: ({ s }) => (seen.push(s), output) });
      const model = scriptedModel((request) => (request.messages.some((m) => m.role === 'tool') ? { text: answer } : { toolCalls: [{ id: 'e1', name: 'echo', arguments: { s: argument } }] }), { recordCalls: false });
      const agent = createAgent({ id: `echo_${name}`, model, tools: [echo], runtime });
      const result = await agent.run(task);
      expect(result.status, name).toBe('done');
      expect(result.text, name).toBe(answer.replace('\u0000', '\uFFFD'));
      expect(seen, name).toEqual([argument.replace('\u0000', '\uFFFD').replace(/[\ud800-\udfff]/, '\uFFFD')]);
      expect(result.messages.find((message) => message.role === 'tool')?.content, name).toBe(output.replace('\u0000', '\uFFFD').replace(/[\ud800-\udfff]/, '\uFFFD'));
    }
  });
});
