/**
 * The agent machine's phase actors make their AbortSignal only when something needs it, and a
 * cancelled run still aborts every signal that was handed out.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/agent/createAgent.ts';
import { createActor, toPromise } from 'xstate';
import { agentMachine } from '../../machines/agent.machine.ts';
import type { AgentMachineInput } from '../../machines/agent.types.ts';
import { phaseRunner, type PhaseImplementations } from '../../machines/phaseRunner.ts';
import { DEFAULTS } from '../../src/core/defaults.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';

/** An actor of the agent machine provided with `phases` by hand. */
const runnerActor = (input: AgentMachineInput, phases: Partial<PhaseImplementations>) =>
  createActor(agentMachine.provide({ actors: { phases: phaseRunner(phases) } }), { input });

const RealAbortController = globalThis.AbortController;
let made = 0;
class CountingAbortController extends RealAbortController {
  constructor() {
    super();
    made++;
  }
}
afterEach(() => {
  globalThis.AbortController = RealAbortController;
});

const echo = defineTool({ name: 'echo', description: 'Echo i.', input: z.object({ i: z.number() }), execute: ({ i }) => i });

function counting<T>(work: () => Promise<T>): Promise<T> {
  made = 0;
  globalThis.AbortController = CountingAbortController;
  return work().finally(() => {
    globalThis.AbortController = RealAbortController;
  });
}

/** A reason phase whose model always proposes one echo call. */
const proposeEcho = async () => ({
  text: null,
  toolCalls: [{ id: 'c1', name: 'echo', arguments: '{"i":1}' }],
  usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
  costUsd: 0,
});

describe('phase abort signals', () => {
  it('makes at most one AbortController per iteration when the gate and the tools never need one', async () => {
    const iterations = 20;
    const model = scriptedModel((request) => {
      const last = request.messages.at(-1);
      const i = last?.role === 'tool' ? Number(last.content) + 1 : 0;
      return i < iterations - 1 ? { toolCalls: [{ name: 'echo', arguments: { i } }] } : { text: 'done' };
    });
    const agent = createAgent({ model, tools: [echo], resilience: { breakers: false }, limits: { maxIterations: iterations + 1 } });
    const result = await counting(() => agent.run('count'));
    expect(result.text).toBe('done');
    expect(result.iterations).toBe(iterations);
    // fromPromise made three per iteration (reason, gate, act); only the model call reads one now.
    expect(made).toBeLessThanOrEqual(iterations);
  });

  it('aborts the signal of a tool that is running when the run is cancelled', async () => {
    let toolSignal: AbortSignal | undefined;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const slow = defineTool({
      name: 'slow',
      description: 'Wait until aborted.',
      input: z.object({}),
      execute: (_, { signal }) =>
        new Promise((_resolve, reject) => {
          toolSignal = signal;
          signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
          started();
        }),
    });
    const model = scriptedModel([{ toolCalls: [{ name: 'slow', arguments: {} }] }, { text: 'never' }]);
    const run = createAgent({ model, tools: [slow] }).start('wait');
    await running;
    run.cancel('user gave up');
    const result = await run.settled;
    expect(result.reason).toBe('cancelled');
    expect(toolSignal?.aborted).toBe(true);
  });

  it('hands a phase that reads its signal only after the run was cancelled an aborted signal', async () => {
    let release!: () => void;
    const waiting = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inGate = new Promise<void>((resolve) => (entered = resolve));
    let late: { aborted: boolean; cancellationAborted: boolean } | undefined;
    const actor = runnerActor({ runId: 'run_late', agentId: 'manual', task: 'go', limits: { ...DEFAULTS.loop }, model: 'm', toolNames: ['echo'] }, {
        reason: proposeEcho,
        gate: async (call) => {
          entered();
          await waiting;
          late = { cancellationAborted: call.cancellation.aborted, aborted: call.signal.aborted };
          return { plan: [] };
        },
        act: async () => ({ outcomes: [] }),
      });
    actor.start();
    await inGate;
    actor.send({ type: 'agent.cancel' });
    expect((await toPromise(actor)).reason).toBe('cancelled');
    release();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(late).toEqual({ cancellationAborted: true, aborted: true });
  });

  it('aborts a signal read before the cancellation, and tells the cancellation to listeners', async () => {
    let entered!: () => void;
    const inAct = new Promise<void>((resolve) => (entered = resolve));
    const heard: string[] = [];
    let signal: AbortSignal | undefined;
    const actor = runnerActor({ runId: 'run_early', agentId: 'manual', task: 'go', limits: { ...DEFAULTS.loop }, model: 'm', toolNames: ['echo'] }, {
        reason: proposeEcho,
        gate: async () => ({ plan: [{ call: { id: 'c1', name: 'echo', arguments: '{"i":1}' }, arguments: { i: 1 }, verdict: 'run' }] }),
        act: (call) =>
          new Promise(() => {
            signal = call.signal;
            expect(call.cancellation.aborted).toBe(false);
            call.cancellation.addEventListener('abort', () => heard.push('abort'), { once: true });
            entered();
          }),
      });
    actor.start();
    await inAct;
    actor.send({ type: 'agent.cancel' });
    expect((await toPromise(actor)).reason).toBe('cancelled');
    expect(signal?.aborted).toBe(true);
    expect(heard).toEqual(['abort']);
  });
});
