/**
 * Session memory on durable agents: the tools of a session's runs (`ctx.session`) read and write
 * the session's memory in PostgreSQL, whichever worker makes their call, and the session's owner
 * sees what they wrote once each run ends.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool } from '../../src/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import type { Agent } from '../../src/agent/types.ts';
import { createPostgresRuntime, runWorker, type PostgresRuntime } from '../../src/postgres/index.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { inProcess, type InProcess } from './fixtures/agents.ts';

const missing = postgresMissing();
const SECRET = 'sk-proj-abcdefghijklmnopqrstuvwxyz012345';

/** Each `remember K V` or `recall K` word pair of the task is one call, in order; the answer is the last result. */
const model = () =>
  scriptedModel((request) => {
    // This run's task is the last user message; the session's earlier turns come before it.
    const at = request.messages.findLastIndex((message) => message.role === 'user');
    const content = request.messages[at]?.content ?? '';
    const task = typeof content === 'string' ? content : '';
    const steps = [...task.matchAll(/(remember) (\w+) (\w+)|(recall) (\w+)/g)];
    const results = request.messages.slice(at).filter((message) => message.role === 'tool');
    const next = steps[results.length];
    if (next === undefined) return { text: results.map((message) => message.content).join('; ') };
    const id = `c${results.length}`;
    return next[1] === 'remember'
      ? { toolCalls: [{ id, name: 'remember', arguments: { key: next[2], value: next[3] } }] }
      : { toolCalls: [{ id, name: 'recall', arguments: { key: next[5] } }] };
  });

/** `hold`: the first recall waits until its worker stops (its signal aborts). */
function memoryTools(hold?: { reached: () => void }) {
  let holding = hold;
  const remember = defineTool({
    name: 'remember',
    description: 'Remember a value for the session.',
    idempotent: true,
    input: z.object({ key: z.string(), value: z.string() }),
    async execute({ key, value }, { session }) {
      if (session === undefined) throw new Error('no session memory');
      // A secret the tool came by itself: the memory must not keep it in the clear.
      await session.set(key, value === 'secret' ? `key ${SECRET}` : value);
      return `${String(session.get('user') ?? 'someone')} remembered ${key}`;
    },
  });
  const recall = defineTool({
    name: 'recall',
    description: 'Recall a value of the session.',
    idempotent: true,
    input: z.object({ key: z.string() }),
    async execute({ key }, { session, signal }) {
      if (holding !== undefined) {
        const { reached } = holding;
        holding = undefined;
        reached();
        await new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('the worker stopped')), { once: true }));
      }
      return `${key} is ${String(session?.get(key) ?? 'unknown')}`;
    },
  });
  return [remember, recall];
}

const agentOn = (runtime: PostgresRuntime, hold?: { reached: () => void }): Agent => createAgent({ id: 'keeper', model: model(), tools: memoryTools(hold), runtime });

describe.skipIf(missing !== '')('session memory on a durable agent', () => {
  let pool: pg.Pool;
  let url: string;
  let setup: InProcess | undefined;
  let caller: PostgresRuntime | undefined;
  let agent: Agent;

  beforeAll(async () => {
    url = await freshDatabase('sessions');
    setup = await inProcess(url, 4);
    ({ pool } = setup);
    // The worker's agent; the session is run from another runtime, as from a process without a worker.
    agentOn(setup.runtime);
    caller = createPostgresRuntime({ connectionString: url, poolSize: 2 });
    agent = agentOn(caller);
  });
  afterAll(async () => {
    await caller?.close();
    await setup?.close();
  });

  it("the tools of a session's runs see what the session's owner and earlier runs stored, and the owner sees what they wrote; secrets are stored redacted", async () => {
    const session = await agent.session('support-1');
    await session.memory('tools').set('user', 'Ada');
    const first = await session.run('Please remember color blue.');
    expect(first.text).toBe('Ada remembered color');
    // Written by the tool in the worker, read by the owner once the run ended.
    expect(session.memory('tools').entries()).toEqual([
      ['user', 'Ada'],
      ['color', 'blue'],
    ]);
    const second = await session.run('Now recall color, and remember token secret.');
    expect(second.text).toBe('color is blue; Ada remembered token');
    const rows = await pool.query<{ session_id: string; namespace: string; key: string; value: unknown }>('SELECT session_id, namespace, key, value FROM actorloop.session_memory ORDER BY seq');
    expect(rows.rows.map((row) => [row.session_id, row.namespace, row.key])).toEqual([
      ['support-1', 'tools', 'user'],
      ['support-1', 'tools', 'color'],
      ['support-1', 'tools', 'token'],
    ]);
    expect(JSON.stringify(rows.rows)).not.toContain(SECRET);
    expect(session.memory('tools').get('token')).toContain('[REDACTED]');
    expect(session.memory('tools').get('token')).not.toContain(SECRET);
    // Other namespaces live there too, and everything outlives the session's handle.
    await session.memory('notes').set('tone', 'brief');
    expect(await session.memory('notes').delete('missing')).toBe(false);
    // Bad keys and values are refused as a session store refuses them, before anything is written.
    await expect(session.memory('notes').set('', 'x')).rejects.toMatchObject({ code: 'session_invalid_key' });
    await expect(session.memory('notes').set('when', new Date() as never)).rejects.toMatchObject({ code: 'session_invalid_value' });
    await session.close();
    expect(() => session.memory('notes')).toThrow(expect.objectContaining({ code: 'session_closed' }));
    const again = await agentOn(createPostgresRuntimeFor(url)).session('support-1');
    expect(again.memory('tools').get('color')).toBe('blue');
    expect(again.memory('notes').entries()).toEqual([['tone', 'brief']]);
    await again.close();
    // A run that is no session's turn has no session memory.
    const plain = await agent.run('remember color red');
    expect(plain.text).toContain('no session memory');
    expect((await pool.query('SELECT 1 FROM actorloop.session_memory WHERE value = $1', ['"red"'])).rowCount).toBe(0);
  }, 60_000);

  it('a memory value with a NUL character or half an emoji is stored as U+FFFD, read the same here and elsewhere; such a key is refused with a SessionError', async () => {
    const session = await agent.session('support-nul');
    await session.memory('notes').set('raw', { text: 'a\u0000b', cut: 'ok\ud83d' });
    const stored = { text: 'a\uFFFDb', cut: 'ok\uFFFD' };
    expect(session.memory('notes').get('raw')).toEqual(stored);
    await expect(session.memory('notes').set('k\u0000', 'x')).rejects.toMatchObject({ code: 'session_invalid_key' });
    await expect(session.memory('notes').set('k\ud83d', 'x')).rejects.toMatchObject({ code: 'session_invalid_key' });
    expect(() => session.memory('n\u0000')).toThrow(expect.objectContaining({ code: 'session_invalid_key' }));
    await session.close();
    const again = await agentOn(createPostgresRuntimeFor(url)).session('support-nul');
    expect(again.memory('notes').entries()).toEqual([['raw', stored]]);
    await again.close();
  }, 30_000);

  it('a tool call made again by another worker, after the first stopped mid-run, sees what the run wrote before', async () => {
    if (setup === undefined) throw new Error('no setup');
    const session = await agent.session('support-2');
    let reached!: () => void;
    const held = new Promise<void>((resolve) => (reached = resolve));
    // The first worker's agent holds its first recall until the worker stops.
    const holding = createPostgresRuntimeFor(url, 6);
    agentOn(holding, { reached });
    await setup.worker.stop();
    const first = await runWorker({ runtime: holding, concurrency: 4, pollIntervalMs: 200 });
    const turn = session.run('Please remember color green, then recall color.');
    await held;
    await first.stop();
    const other = createPostgresRuntimeFor(url, 6);
    agentOn(other);
    const second = await runWorker({ runtime: other, concurrency: 4, pollIntervalMs: 200 });
    try {
      const result = await turn;
      expect(result.text).toBe('someone remembered color; color is green');
      const workers = await pool.query<{ n: number }>('SELECT count(DISTINCT worker)::int AS n FROM actorloop.steps WHERE actor_id = $1', [result.runId]);
      expect(workers.rows[0]?.n).toBe(2);
      expect(session.memory('tools').get('color')).toBe('green');
    } finally {
      await session.close();
      await second.stop();
      await Promise.all([holding.close(), other.close()]);
    }
  }, 60_000);
});

const opened: PostgresRuntime[] = [];
afterAll(async () => {
  await Promise.all(opened.splice(0).map((runtime) => runtime.close()));
});

function createPostgresRuntimeFor(url: string, poolSize = 2): PostgresRuntime {
  const runtime = createPostgresRuntime({ connectionString: url, poolSize });
  if (poolSize === 2) opened.push(runtime);
  return runtime;
}
