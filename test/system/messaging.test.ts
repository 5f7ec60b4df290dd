/**
 * tell and ask: a message becomes a task (one run) of the agent; asks get the run's result or its
 * typed error; an agent's mailbox runs tasks one at a time unless given more concurrency.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunLimitError } from '../../src/agent/errors.ts';
import { RunCancelledError } from '../../src/agent/errors.ts';
import type { LoopResult } from '../../src/core/run.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { messagesIn, nextEvent, trackedSystem } from './helpers.ts';

const echo = defineTool({ name: 'echo', description: 'Echo', input: z.object({ v: z.string() }), execute: ({ v }) => v });

describe('tell', () => {
  it('runs the message as a task of the agent, without waiting for it', async () => {
    const { system } = trackedSystem();
    const model = scriptedModel([{ text: 'noted' }]);
    const worker = system.spawn('worker', { model });
    const terminated = nextEvent(system.events$, 'run.terminated', 'worker');

    const receipt = system.tell('worker', 'Remember the milk');

    expect(receipt.runId).toMatch(/^run_/);
    const end = await terminated;
    expect(end.runId).toBe(receipt.runId);
    expect(end.event.reason).toBe('final_answer');
    expect(model.calls[0]?.messages.at(-1)).toEqual({ role: 'user', content: 'Remember the milk' });
    // The message heads the run in the receiver's journal.
    const run = worker.agent.journal.entries(receipt.runId);
    expect(run[0]?.event).toEqual({ type: 'agent.message', from: 'user', to: 'worker', kind: 'tell', correlationId: receipt.correlationId, runId: receipt.runId });
    expect(run[1]?.event.type).toBe('run.started');
  });

  it('records a message between agents in both journals', async () => {
    const { system } = trackedSystem();
    const a = system.spawn('a', { model: scriptedModel([]) });
    const b = system.spawn('b', { model: scriptedModel([{ text: 'ok' }]) });
    const done = nextEvent(system.events$, 'run.terminated', 'b');
    const { correlationId, runId } = system.tell('b', 'hello', { from: 'a' });
    await done;
    const expected = { runId, kind: 'tell', from: 'a', to: 'b', correlationId };
    expect(messagesIn(a.agent.journal.entries())).toEqual([expected]);
    expect(messagesIn(b.agent.journal.entries())).toEqual([expected]);
  });
});

describe('ask', () => {
  it('resolves with the result of the run it started', async () => {
    const { system } = trackedSystem();
    const b = system.spawn('b', { model: scriptedModel([{ text: '42' }]) });
    const result = await system.ask('b', 'What is 6 * 7?');
    expect(result).toMatchObject({ status: 'done', text: '42', agentId: 'b' });
    const kinds = messagesIn(b.agent.journal.entries(result.runId)).map((m) => `${m.kind}:${m.from}->${m.to}`);
    expect(kinds).toEqual(['ask:user->b', 'reply:b->user']);
  });

  it("rejects with the run's typed error when the run fails", async () => {
    const { system } = trackedSystem();
    system.spawn('looper', {
      model: scriptedModel(() => ({ toolCalls: [{ name: 'echo', arguments: { v: 'again' } }] })),
      tools: [echo],
      limits: { maxIterations: 2 },
    });
    const error = await system.ask('looper', 'loop').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'max_iterations' });
    expect((error as RunLimitError).result).toMatchObject({ agentId: 'looper', iterations: 2, status: 'failed' });
  });

  it('runs one task at a time by default, in arrival order', async () => {
    const { system } = trackedSystem();
    const model = scriptedModel((request) => ({ text: `done: ${String(request.messages.at(-1)?.content)}`, delayMs: 5 }));
    const worker = system.spawn('worker', { model });
    const first = worker.ask('first');
    const second = worker.ask('second');

    expect(worker.actor.getSnapshot().value).toBe('busy');
    expect(worker.actor.getSnapshot().context.running.map((t) => t.message)).toEqual(['first']);
    expect(worker.actor.getSnapshot().context.queue.map((t) => t.message)).toEqual(['second']);

    const [one, two] = await Promise.all([first, second]);
    expect([one.text, two.text]).toEqual(['done: first', 'done: second']);
    // In the journal (insertion order), the second run starts only after the first has ended.
    const lifecycle = worker.agent.journal
      .entries()
      .filter((e) => e.event.type === 'run.started' || e.event.type === 'run.terminated')
      .map((e) => `${e.runId === one.runId ? 'first' : 'second'} ${e.event.type}`);
    expect(lifecycle).toEqual(['first run.started', 'first run.terminated', 'second run.started', 'second run.terminated']);
    expect(worker.actor.getSnapshot().value).toBe('idle');
  });

  it('runs up to `concurrency` tasks at once', async () => {
    const { system } = trackedSystem();
    const model = scriptedModel(() => ({ text: 'ok', delayMs: 5 }));
    const worker = system.spawn('worker', { model }, { concurrency: 2 });
    const answers = [worker.ask('1'), worker.ask('2'), worker.ask('3')];
    expect(worker.actor.getSnapshot().context.running).toHaveLength(2);
    expect(worker.actor.getSnapshot().context.queue).toHaveLength(1);
    const results: LoopResult[] = await Promise.all(answers);
    expect(new Set(results.map((r) => r.runId)).size).toBe(3);
    expect(model.calls).toHaveLength(3);
    expect(worker.actor.getSnapshot().children).toEqual({});
  });

  it("cancels the asked run when the caller's signal aborts, rejecting with its reason", async () => {
    const { system } = trackedSystem();
    const worker = system.spawn('worker', { model: scriptedModel([{ text: 'late', delayMs: 60_000 }]) });
    const controller = new AbortController();
    const started = nextEvent(system.events$, 'run.started', 'worker');
    const answer = worker.ask('slow task', { signal: controller.signal });
    const { runId } = await started;
    controller.abort(new Error('caller gave up'));
    await expect(answer).rejects.toThrow('caller gave up');
    const end = worker.agent.journal.entries(runId).find((e) => e.event.type === 'run.terminated');
    expect(end?.event).toMatchObject({ reason: 'cancelled' });
    expect(worker.actor.getSnapshot().context.running).toEqual([]);
    // Already aborted: rejected at once, nothing queued.
    await expect(worker.ask('again', { signal: controller.signal })).rejects.toThrow('caller gave up');
    expect(worker.actor.getSnapshot().context.queue).toEqual([]);
  });

  it('rejects with RunCancelledError when someone else cancels the task through its host', async () => {
    const { system } = trackedSystem();
    const worker = system.spawn('worker', { model: scriptedModel([{ text: 'late', delayMs: 60_000 }]) });
    const reasoning = nextEvent(system.events$, 'phase.entered', 'worker');
    const answer = worker.ask('slow task');
    const [task] = worker.actor.getSnapshot().context.running;
    // The task's run has started (it is past its first phase): cancelling it now ends the run.
    await reasoning;
    worker.actor.send({ type: 'agent.cancel', taskId: task?.taskId ?? '', reason: 'superseded' });
    await expect(answer).rejects.toBeInstanceOf(RunCancelledError);
  });
});
