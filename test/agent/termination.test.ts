/**
 * How runs end through `createAgent`: every termination reason maps to one typed error class
 * carrying the run id and the result; `settled` always resolves; cancellation aborts whatever
 * is in flight; and nothing a user plugs in (gate, provider, subscriber) can crash the host.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { waitFor } from 'xstate';
import { z } from 'zod';
import type { Agent, AgentConfig, RunOptions } from '../../src/agent/createAgent.ts';
import type { RunError } from '../../src/agent/errors.ts';
import { RunCancelledError } from '../../src/agent/errors.ts';
import type { LoopResult } from '../../src/core/run.ts';
import { ActorloopError, type ErrorCode } from '../../src/core/errors.ts';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import type { Completion, CompletionRequest, InferenceProvider, StreamEvent } from '../../src/core/provider.ts';
import { gates } from '../../src/policy/gates.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { trackAgent as agentWith, stopTrackedAgents, toolMessages, collectUnhandledRejections } from '../support/agents.ts';

afterEach(stopTrackedAgents);

const echo = defineTool({ name: 'echo', description: 'Echo', input: z.object({ v: z.string() }), execute: ({ v }) => v });
const loopForever = () => scriptedModel(() => ({ toolCalls: [{ name: 'echo', arguments: { v: 'again' } }] }));

/** A provider whose every call fails with `thrown` (any value, not only Errors). */
function failingProvider(thrown: () => unknown): InferenceProvider {
  return {
    name: 'failing',
    defaultModel: 'failing-model',
    supportsNativeTools: true,
    supportsStructuredOutput: false,
    complete: <TOutput>(_request: CompletionRequest<TOutput>): Promise<Completion<TOutput>> => Promise.reject(thrown()),
    // eslint-disable-next-line require-yield
    stream: async function* <TOutput>(_request: CompletionRequest<TOutput>): AsyncIterable<StreamEvent<TOutput>> {
      throw thrown();
    },
  };
}

interface Case {
  readonly reason: LoopResult['reason'];
  readonly status: LoopResult['status'];
  readonly code: ErrorCode;
  readonly config: () => AgentConfig;
  readonly options?: RunOptions;
  readonly act?: (run: ReturnType<Agent['start']>) => Promise<void> | void;
}

const cases: Case[] = [
  { reason: 'max_iterations', status: 'failed', code: 'max_iterations', config: () => ({ model: loopForever(), tools: [echo], limits: { maxIterations: 3 } }) },
  {
    reason: 'max_tokens',
    status: 'failed',
    code: 'max_tokens',
    config: () => ({
      model: scriptedModel(() => ({ toolCalls: [{ name: 'echo', arguments: { v: 'x' } }], usage: { totalTokens: 600 } })),
      tools: [echo],
      limits: { maxTotalTokens: 1_000 },
    }),
  },
  {
    reason: 'timeout',
    status: 'failed',
    code: 'run_timeout',
    config: () => ({ model: scriptedModel([{ text: 'late', delayMs: 5_000 }]), limits: { timeoutMs: 30 } }),
  },
  {
    reason: 'cancelled',
    status: 'cancelled',
    code: 'run_cancelled',
    config: () => ({ model: scriptedModel([{ text: 'late', delayMs: 5_000 }]) }),
    act: async (run) => {
      await waitFor(run.actor, (s) => s.matches({ running: 'reason' }));
      run.cancel('user pressed stop');
    },
  },
  {
    reason: 'model_behavior',
    status: 'failed',
    code: 'model_repair_exhausted',
    config: () => ({
      model: scriptedModel(() => ({ toolCalls: [{ name: 'nope', arguments: {} }] })),
      tools: [echo],
      limits: { maxRepairTurns: 1 },
    }),
  },
  { reason: 'error', status: 'failed', code: 'unexpected', config: () => ({ model: failingProvider(() => new Error('socket hang up')) }) },
  { reason: 'error', status: 'failed', code: 'script_exhausted', config: () => ({ model: scriptedModel([]) }) },
];

describe('run termination through createAgent', () => {
  it('resolves run() and settled with the result on a final answer', async () => {
    const agent = agentWith({ model: scriptedModel([{ text: 'forty-two' }, { text: 'again' }]) });
    const result = await agent.run('answer', { runId: 'run-ok' });
    expect(result).toMatchObject({ runId: 'run-ok', agentId: agent.id, status: 'done', reason: 'final_answer', text: 'forty-two', iterations: 1 });
    const handle = agent.start('again');
    await expect(handle.settled).resolves.toMatchObject({ status: 'done', reason: 'final_answer' });
    expect(handle.phase()).toBe('done');
  });

  it.each(cases.map((c) => [`${c.reason} → ${c.code}`, c] as const))(
    '%s: run() rejects with the typed error carrying runId and result; settled resolves',
    async (_label, c) => {
      const agent = agentWith(c.config());
      const run = agent.start('task', { runId: `run-${c.reason}` });
      await c.act?.(run);
      const error = await run.result.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: c.code });
      expect(error).toBeInstanceOf(ActorloopError);
      const typed = error as ActorloopError & { result: LoopResult };
      expect(typed.runId).toBe(`run-${c.reason}`);
      expect(typed.result).toMatchObject({ runId: `run-${c.reason}`, status: c.status, reason: c.reason });
      const settled = await run.settled;
      expect(settled).toBe(typed.result);
      expect(run.phase()).toBe(c.status === 'cancelled' ? 'cancelled' : 'failed');
    },
  );

  it('agent.run() rejects with the same typed error as start().result', async () => {
    const agent = agentWith({ model: loopForever(), tools: [echo], limits: { maxIterations: 2 } });
    await expect(agent.run('loop')).rejects.toMatchObject({ code: 'max_iterations' });
  });

  it('cancel() during a slow tool ends with RunCancelledError and aborts the tool signal', async () => {
    const signals: AbortSignal[] = [];
    const slow = defineTool({
      name: 'slow',
      description: 'Slow but polite',
      input: z.object({}),
      execute: (_args, { signal }) => {
        signals.push(signal);
        return new Promise<string>((resolve, reject) => {
          const timer = setTimeout(() => resolve('finished'), 5_000);
          signal.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(signal.reason);
          });
        });
      },
    });
    const model = scriptedModel([{ toolCalls: [{ id: 's1', name: 'slow', arguments: {} }] }, { text: 'never reached' }]);
    const agent = agentWith({ model, tools: [slow] });
    const entries: JournalEntry[] = [];
    agent.events$.subscribe((e) => entries.push(e));
    const run = agent.start('slow work');
    await waitFor(run.actor, (s) => s.matches({ running: 'act' }));
    await vi.waitFor(() => expect(signals).toHaveLength(1));
    const cancelledAt = performance.now();
    run.cancel('stop');
    const error = await run.result.catch((e: unknown) => e);
    expect(performance.now() - cancelledAt).toBeLessThan(1_000);
    expect(error).toBeInstanceOf(RunCancelledError);
    expect(signals[0]?.aborted).toBe(true);
    expect(model.calls).toHaveLength(1);
    expect(entries.at(-1)?.event).toMatchObject({ type: 'run.terminated', reason: 'cancelled' });
  });

  it('cancel() during a slow model call aborts it promptly', async () => {
    const model = scriptedModel([{ text: 'too slow', delayMs: 10_000 }]);
    const agent = agentWith({ model });
    const run = agent.start('think hard');
    await waitFor(run.actor, (s) => s.matches({ running: 'reason' }));
    await vi.waitFor(() => expect(model.calls).toHaveLength(1));
    const cancelledAt = performance.now();
    run.cancel();
    const settled = await run.settled;
    expect(performance.now() - cancelledAt).toBeLessThan(1_000);
    expect(settled).toMatchObject({ status: 'cancelled', reason: 'cancelled', text: null });
    expect(model.calls[0]?.signal?.aborted).toBe(true);
  });

  it('agent.stop() cancels every run in flight', async () => {
    const agent = agentWith({ model: scriptedModel(() => ({ text: 'slow', delayMs: 10_000 })) });
    const runs = [agent.start('one'), agent.start('two')];
    agent.stop();
    const settled = await Promise.all(runs.map((r) => r.settled));
    expect(settled.map((r) => r.status)).toEqual(['cancelled', 'cancelled']);
  });
});

describe('never crash the host', () => {
  const unhandled = collectUnhandledRejections();
  afterEach(() => vi.restoreAllMocks());

  it('a gate that throws denies the call (fail closed) and the run continues', async () => {
    let executed = 0;
    const tool = defineTool({ name: 'act', description: 'Act', input: z.object({}), execute: () => ++executed });
    const model = scriptedModel([{ toolCalls: [{ id: 'g1', name: 'act', arguments: {} }] }, { text: 'continued' }]);
    const gate = gates.fromFunction('buggy', () => {
      throw new Error('gate internals: db password is hunter2');
    });
    const result = await agentWith({ model, tools: [tool], policy: { gate } }).run('act');
    expect(result.text).toBe('continued');
    expect(executed).toBe(0);
    const denial = toolMessages(model.calls[1]?.messages ?? [])[0];
    expect(denial).toMatchObject({ toolCallId: 'g1', isError: true });
    expect(denial?.content).toContain('policy gate "buggy" failed');
    expect(denial?.content).not.toContain('hunter2');
  });

  it.each([
    ['a string', () => 'provider exploded'],
    ['null', () => null],
    ['an object', () => ({ status: 500 })],
  ])('a provider that throws %s fails the run with a typed error, not an unhandled rejection', async (_label, thrown) => {
    const agent = agentWith({ model: failingProvider(thrown) });
    const error = await agent.run('hi', { runId: 'run-weird' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unexpected' });
    const typed = error as RunError;
    expect(typed.runId).toBe('run-weird');
    expect(typed.result).toMatchObject({ status: 'failed', reason: 'error', error: { code: 'error' } });
    expect(typed.result.cause).toEqual(thrown());
    const streaming = agentWith({ model: { provider: failingProvider(thrown), stream: true } });
    await expect(streaming.run('hi')).rejects.toMatchObject({ code: 'unexpected' });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(unhandled).toEqual([]);
  });

  it('a throwing events$ subscriber does not break the run or other subscribers', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const model = scriptedModel([{ toolCalls: [{ id: 'e1', name: 'echo', arguments: { v: 'hi' } }] }, { text: 'fine' }]);
    const agent = agentWith({ model, tools: [echo] });
    let agentThrows = 0;
    let runThrows = 0;
    agent.events$.subscribe(() => {
      agentThrows++;
      throw new Error('subscriber bug');
    });
    const seen: string[] = [];
    agent.events$.subscribe((e) => seen.push(e.event.type));
    const run = agent.start('echo');
    run.events$.subscribe(() => {
      runThrows++;
      throw new Error('run subscriber bug');
    });
    const result = await run.result;
    expect(result.text).toBe('fine');
    expect(seen.at(-1)).toBe('run.terminated');
    expect(seen).toContain('tool.finished');
    // Every event reached both throwing subscribers (the run's replays what came before it).
    expect([agentThrows, runThrows]).toEqual([seen.length, seen.length]);
    // RxJS reports subscriber errors from a timer; they reach the warning, not the process: each error once, in one line.
    await vi.waitFor(() => expect(warn).toHaveBeenCalledTimes(2));
    await new Promise((resolve) => setTimeout(resolve, 0));
    const tail = '(the run continues; further errors from it are not reported)';
    expect(warn.mock.calls.map(([line]) => String(line)).sort()).toEqual([
      `[actorloop] an events$ subscriber threw Error: run subscriber bug ${tail}`,
      `[actorloop] an events$ subscriber threw Error: subscriber bug ${tail}`,
    ]);
    expect(unhandled).toEqual([]);
  });
});
