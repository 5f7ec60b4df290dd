/**
 * The run API's edges: `run(task, { signal })` ends the run cancelled when the signal aborts
 * (before the run, or while its model call is in flight); a task the agent cannot start rejects
 * the promise rather than throwing; and every streamed token names its run, so two runs that
 * stream at once can be told apart.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../src/agent/createAgent.ts';
import { RunCancelledError } from '../../src/agent/errors.ts';
import { ConfigurationError } from '../../src/core/errors.ts';
import { openAICompatible } from '../../src/inference/openaiCompatible.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { reply, useOpenAIServer } from '../support/openaiServer.ts';

const openai = useOpenAIServer();

const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.stop();
});
const track = (agent: Agent): Agent => {
  agents.push(agent);
  return agent;
};

describe('run(task, { signal })', () => {
  it('an already aborted signal cancels the run: it rejects with RunCancelledError and the model is never answered', async () => {
    const model = scriptedModel([{ text: 'too late' }]);
    const agent = track(createAgent({ model }));
    const error = await agent.run('hello', { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunCancelledError);
    expect((error as RunCancelledError).result).toMatchObject({ status: 'cancelled', reason: 'cancelled', text: null });
  });

  it('aborting while the model call is in flight cancels the run and aborts the call', async () => {
    let seen: AbortSignal | undefined;
    const model = scriptedModel((request) => {
      seen = request.signal;
      return { text: 'slow answer', delayMs: 60_000 };
    });
    const agent = track(createAgent({ model }));
    const controller = new AbortController();
    const running = agent.run('hello', { signal: controller.signal }).catch((e: unknown) => e);
    await expect.poll(() => seen).toBeDefined();
    controller.abort(new Error('user left'));
    const error = await running;
    expect(error).toBeInstanceOf(RunCancelledError);
    expect(seen?.aborted).toBe(true);
  }, 10_000);

  it('cancels a session turn too', async () => {
    const agent = track(createAgent({ model: scriptedModel([{ text: 'too late' }]) }));
    const session = await agent.session('s1');
    await expect(session.run('hello', { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(RunCancelledError);
    await session.close();
  });

  it('a signal that never aborts changes nothing', async () => {
    const agent = track(createAgent({ model: scriptedModel([{ text: 'fine' }]) }));
    await expect(agent.run('hello', { signal: new AbortController().signal })).resolves.toMatchObject({ status: 'done', text: 'fine' });
  });
});

describe('a task the agent cannot start', () => {
  it("run('') returns a rejected promise with ConfigurationError instead of throwing", async () => {
    const agent = track(createAgent({ model: scriptedModel([]) }));
    let promise: Promise<unknown> | undefined;
    expect(() => {
      promise = agent.run('');
    }).not.toThrow();
    await expect(promise).rejects.toBeInstanceOf(ConfigurationError);
    await expect(agent.run('   ')).rejects.toThrow(/non-empty task/);
    await expect(agent.call('')).rejects.toBeInstanceOf(ConfigurationError);
  });
});

describe('tokens$', () => {
  it('tells two concurrent streamed runs apart by run id', async () => {
    // Each run's reply streams over HTTP, one event at a time with a gap, so the two streams interleave.
    const answer = (pieces: string[]) => reply.stream({ textPieces: pieces }, undefined, 20);
    for (let i = 0; i < 2; i++) {
      openai().enqueue(
        reply.custom((request) => {
          const task = (request.body as { messages: { role: string; content: unknown }[] }).messages.find((m) => m.role === 'user')?.content;
          return task === 'first' ? answer(['a1 ', 'a2 ', 'a3']) : answer(['b1 ', 'b2 ', 'b3']);
        }),
      );
    }
    const provider = openAICompatible({ baseURL: openai().baseURL, apiKey: 'test', model: 'gpt-4o-mini', env: {}, timeoutMs: 10_000 });
    const agent = track(createAgent({ model: { provider, stream: true } }));
    const deltas: { runId: string; delta: string }[] = [];
    agent.tokens$.subscribe((token) => deltas.push(token));
    const first = agent.start('first');
    const second = agent.start('second');
    const [a, b] = await Promise.all([first.result, second.result]);
    expect(a.text).toBe('a1 a2 a3');
    expect(b.text).toBe('b1 b2 b3');
    expect(deltas.filter((d) => d.runId === first.runId).map((d) => d.delta)).toEqual(['a1 ', 'a2 ', 'a3']);
    expect(deltas.filter((d) => d.runId === second.runId).map((d) => d.delta)).toEqual(['b1 ', 'b2 ', 'b3']);
    expect(deltas).toHaveLength(6);
  }, 10_000);
});

describe('the runs an agent keeps track of', () => {
  it('handle(runId) finds runs from start, run and a session turn while they are in progress, not once they settled; stop() cancels them all', async () => {
    const model = scriptedModel(() => ({ text: 'slow answer', delayMs: 60_000 }));
    const agent = track(createAgent({ model }));
    const begun: string[] = [];
    const third = new Promise<string>((resolve) =>
      agent.events$.subscribe(({ runId, event }) => {
        if (event.type === 'run.started' && begun.push(runId) === 3) resolve(runId);
      }),
    );
    const started = agent.start('one');
    const running = agent.run('two', { runId: 'run_two' }).catch((error: unknown) => error);
    const session = await agent.session('s1');
    const turn = session.run('three').catch((error: unknown) => error);
    const turnId = await third;
    const prepared = agent.prepare('four');
    expect(agent.handle(started.runId)).toBe(started);
    expect(agent.handle('run_two')?.runId).toBe('run_two');
    expect(agent.handle(turnId)?.runId).toBe(turnId);
    // A prepared run belongs to the parent that spawns it.
    expect(agent.handle(prepared.runId)).toBeUndefined();

    agent.stop();
    expect(await started.settled).toMatchObject({ status: 'cancelled' });
    expect(await running).toBeInstanceOf(RunCancelledError);
    expect(await turn).toBeInstanceOf(RunCancelledError);
    await session.close();
    for (const runId of begun) expect(agent.handle(runId)).toBeUndefined();
  });
});
