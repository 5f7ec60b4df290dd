/**
 * A durable agent used as an in-memory one is: `start` and `resume` give a handle that follows
 * the run from any process, `call` makes a one-call run, sessions carry their history, and MCP
 * servers' tools are called like its own.
 */
import pg from 'pg';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, defineTool, type JournalEntry } from '../../src/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { createPostgresRuntime, type PostgresRuntime } from '../../src/postgres/index.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { counterAgent, inProcess, type InProcess } from './fixtures/agents.ts';
import { everythingStdio } from '../mcp/support.ts';

const missing = postgresMissing();

describe.skipIf(missing !== '')('a durable agent followed from any process', () => {
  let url: string;
  let pool: pg.Pool;
  let runtime: PostgresRuntime;
  let setup: InProcess | undefined;

  beforeAll(async () => {
    // Serves every agent created with `runtime` in this process, whenever it was created.
    setup = await inProcess(await freshDatabase('follow'), 2);
    ({ url, pool, runtime } = setup);
  });
  afterAll(async () => {
    await setup?.close();
  });

  it('start gives a handle whose events are the run\'s, each once and in order, and whose result is the answer', async () => {
    const agent = counterAgent(runtime, pool, { id: 'starter', calls: 2 });
    const run = agent.start('Record two numbers.');
    const seen: JournalEntry[] = [];
    const completed = new Promise<void>((resolve) => run.events$.subscribe({ next: (entry) => seen.push(entry), complete: resolve }));
    const result = await run.result;
    expect(result.text).toBe('recorded 2');
    await completed;
    expect(seen.map((entry) => entry.sequence)).toEqual(seen.map((_, i) => i));
    expect(seen.every((entry) => entry.runId === run.runId)).toBe(true);
    expect(seen.map((entry) => entry.event.type)).toEqual((await runtime.journal(run.runId)).map((entry) => entry.event.type));
    expect(run.phase()).toBe('done');
  });

  it('resume in another process follows a run that waits for a human, and its approve lets the run go on', async () => {
    const deploy = defineTool({ name: 'deploy', description: 'Deploy.', input: z.object({}), requiresConfirmation: true, execute: () => 'deployed' });
    const model = () =>
      scriptedModel((request) => (request.messages.some((message) => message.role === 'tool') ? { text: 'shipped' } : { toolCalls: [{ id: 'd1', name: 'deploy', arguments: {} }] }), {
        recordCalls: false,
      });
    const agent = createAgent({ id: 'deployer', model: model(), tools: [deploy], runtime });
    const first = agent.start('Deploy it.', { runId: 'run_follow_deploy' });
    await expect.poll(() => first.phase(), { timeout: 20_000 }).toBe('awaitingHuman');
    // Another process: its own runtime, the same agent.
    const elsewhere = createPostgresRuntime({ connectionString: url, poolSize: 2 });
    try {
      const again = createAgent({ id: 'deployer', model: model(), tools: [deploy], runtime: elsewhere });
      const followed = again.resume('run_follow_deploy');
      await expect.poll(() => followed.phase(), { timeout: 20_000 }).toBe('awaitingHuman');
      followed.approve();
      expect((await followed.result).text).toBe('shipped');
      expect((await first.result).text).toBe('shipped');
    } finally {
      await elsewhere.close();
    }
  });

  it('a run nobody follows tells the runtime\'s channel only when its status changes: when it starts and when it ends', async () => {
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    const statuses: string[] = [];
    listener.on('notification', (message) => {
      const notice = JSON.parse(message.payload ?? '{}') as { actor?: string; status?: string };
      if (notice.actor === 'run_unfollowed') statuses.push(notice.status ?? '?');
    });
    try {
      await listener.query('LISTEN actorloop');
      const agent = counterAgent(runtime, pool, { id: 'unfollowed', calls: 6 });
      expect((await agent.run('Record six numbers.', { runId: 'run_unfollowed' })).text).toBe('recorded 6');
      const steps = (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM actorloop.steps WHERE actor_id = 'run_unfollowed'")).rows[0]?.n;
      expect(steps).toBe(8);
      await expect.poll(() => statuses, { timeout: 10_000 }).toEqual(['running', 'done']);
    } finally {
      await listener.end();
    }
  });

  it('a process that starts following a run mid-way gets each of its entries once and in order, to its end', async () => {
    let reached!: () => void;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const model = () =>
      scriptedModel(
        (request) => {
          const done = request.messages.filter((message) => message.role === 'tool').length;
          return done >= 6 ? { text: 'counted' } : { toolCalls: [{ id: `c${done}`, name: 'tick', arguments: { n: done } }] };
        },
        { recordCalls: false },
      );
    const tick = defineTool({
      name: 'tick',
      description: 'Count one.',
      input: z.object({ n: z.number() }),
      execute: async ({ n }) => {
        if (n === 3) {
          reached();
          await gate;
        }
        return `tick ${n}`;
      },
    });
    const agent = createAgent({ id: 'ticker', model: model(), tools: [tick], runtime });
    const run = agent.start('Count six.', { runId: 'run_followed_midway' });
    await atGate;
    // Another process: its own runtime, the same agent; it follows once the run is under way.
    const elsewhere = createPostgresRuntime({ connectionString: url, poolSize: 2 });
    try {
      const followed = createAgent({ id: 'ticker', model: model(), tools: [tick], runtime: elsewhere }).resume('run_followed_midway');
      const seen: JournalEntry[] = [];
      const completed = new Promise<void>((resolve) => followed.events$.subscribe({ next: (entry) => seen.push(entry), complete: resolve }));
      // The steps after this one happen while it follows.
      await expect.poll(() => seen.length, { timeout: 20_000 }).toBeGreaterThan(0);
      open();
      expect((await run.result).text).toBe('counted');
      await completed;
      expect(seen.map((entry) => entry.sequence)).toEqual(seen.map((_, i) => i));
      expect(seen.map((entry) => entry.event.type)).toEqual((await runtime.journal(run.runId)).map((entry) => entry.event.type));
    } finally {
      await elsewhere.close();
    }
  });

  it('resume of a run that does not exist settles failed, saying so', async () => {
    const agent = counterAgent(runtime, pool, { id: 'ghost' });
    const result = await agent.resume('run_nobody').settled;
    expect(result.status).toBe('failed');
    expect(result.error?.message).toMatch(/No durable run run_nobody/);
  });

  it('call makes a durable run of one model call, offered no tools', async () => {
    const asked: boolean[] = [];
    const model = scriptedModel(
      (request) => {
        asked.push(request.tools === undefined || request.tools.length === 0);
        return { text: 'a haiku' };
      },
      { recordCalls: false },
    );
    const agent = createAgent({ id: 'poet', model, tools: [defineTool({ name: 'noop', description: 'Nothing.', input: z.object({}), execute: () => '' })], runtime });
    const result = await agent.call('Write a haiku.');
    expect(result.text).toBe('a haiku');
    expect(asked).toEqual([true]);
    const started = (await runtime.journal(result.runId)).find((entry) => entry.event.type === 'run.started');
    expect(started?.event).toMatchObject({ mode: 'call' });
  });

  it('a session of a durable agent starts each run from the turns before it', async () => {
    const model = scriptedModel((request) => ({ text: `I have seen ${request.messages.filter((message) => message.role === 'user').length} messages` }), { recordCalls: false });
    const agent = createAgent({ id: 'chatty', model, runtime });
    const session = await agent.session('s1');
    expect((await session.run('Hello.')).text).toBe('I have seen 1 messages');
    expect((await session.run('Again.')).text).toBe('I have seen 2 messages');
    expect(session.history().map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    await session.close();
  });

  it('calls an MCP server\'s tool as a recorded call of the run, made by the worker', async () => {
    const model = scriptedModel(
      (request) => {
        const reply = request.messages.findLast((message) => message.role === 'tool');
        return reply === undefined ? { toolCalls: [{ id: 'e1', name: 'everything_echo', arguments: { message: 'over MCP, durably' } }] } : { text: `heard: ${String(reply.content)}` };
      },
      { recordCalls: false },
    );
    const agent = createAgent({ id: 'mcp_user', model, mcpServers: [everythingStdio], runtime });
    try {
      const result = await agent.run('Echo something.');
      expect(result.text).toContain('over MCP, durably');
      const calls = await pool.query<{ tool: string; status: string }>("SELECT request->>'tool' AS tool, status FROM actorloop.effects WHERE actor_id = $1 AND kind = 'tool'", [result.runId]);
      expect(calls.rows).toEqual([{ tool: 'everything_echo', status: 'done' }]);
    } finally {
      await agent.close();
    }
  }, 60_000);
});
