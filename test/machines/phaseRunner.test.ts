/**
 * The `phases` worker: one actor per run runs every phase the machine hands it, replies once per
 * phase, and drops what a stopped run's phase produces.
 */
import { createActor, fromCallback, toPromise, type InspectionEvent } from 'xstate';
import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { agentMachine } from '../../machines/agent.machine.ts';
import { phaseRunner, type PhaseImplementations, type PhaseRunnerLogic } from '../../machines/phaseRunner.ts';
import type { AgentMachineInput } from '../../machines/agent.types.ts';
import type { PlannedCall } from '../../src/core/run.ts';

const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2 };
const input: AgentMachineInput = {
  runId: 'run_pr',
  agentId: 'agent_pr',
  task: 'count',
  model: 'test-model',
  toolNames: ['echo'],
  limits: { maxIterations: 50, maxTotalTokens: 1_000_000, timeoutMs: 300_000, maxRepairTurns: 3 },
};

/** `n` iterations of one echo call, then an answer. */
function counting(n: number): PhaseImplementations {
  return {
    reason: async ({ input: { iteration } }) =>
      iteration < n ? { text: null, toolCalls: [{ id: `c${iteration}`, name: 'echo', arguments: '{}' }], usage, costUsd: 0 } : { text: 'counted', toolCalls: [], usage, costUsd: 0 },
    gate: async ({ input: { calls } }) => ({ plan: calls.map((call): PlannedCall => ({ call, arguments: {}, verdict: 'run' })) }),
    act: async ({ input: { calls } }) => ({ outcomes: calls.map((c) => ({ toolCallId: c.call.id, tool: 'echo', status: 'ok' as const, content: 'ok', isError: false })) }),
  };
}

describe('the phases worker', () => {
  it('runs a whole run in one worker actor: no actor is created per phase or per iteration', async () => {
    const created: string[] = [];
    const inspect = (event: InspectionEvent) => {
      if (event.type === '@xstate.actor') created.push((event.actorRef as { id?: string }).id ?? '?');
    };
    const actor = createActor(agentMachine.provide({ actors: { phases: phaseRunner(counting(20)) } }), { input, inspect });
    actor.start();
    const output = await toPromise(actor);
    expect(output.text).toBe('counted');
    expect(output.iterations).toBe(21);
    expect(created).toHaveLength(2);
    expect(created).toContain('phases');
  });

  it('replies to each request once, in the order of the phases', async () => {
    const requests: string[] = [];
    const replies: string[] = [];
    const inspect = (event: InspectionEvent) => {
      if (event.type !== '@xstate.event') return;
      if (event.event.type === 'phase.run') requests.push((event.event as unknown as { job: { phase: string } }).job.phase);
      else if (/\.done$|^phase\.error$/.test(event.event.type)) replies.push(event.event.type);
    };
    const actor = createActor(agentMachine.provide({ actors: { phases: phaseRunner(counting(2)) } }), { input, inspect });
    actor.start();
    await toPromise(actor);
    const phases = ['hydrate', 'reason', 'gate', 'act', 'reason', 'gate', 'act', 'reason'];
    expect(requests).toEqual(phases);
    expect(replies).toEqual(phases.map((p) => `${p}.done`));
  });

  it('aborts the phase in flight when the run is cancelled, and drops what it returns afterwards', async () => {
    let signal: AbortSignal | undefined;
    let finishLate!: () => void;
    const late = new Promise<void>((resolve) => (finishLate = resolve));
    const replies: string[] = [];
    const implementations: PhaseImplementations = {
      ...counting(5),
      reason: async (args) => {
        signal = args.signal;
        await late; // ignores the signal: answers after the cancel anyway
        return { text: 'too late', toolCalls: [], usage, costUsd: 0 };
      },
    };
    const inspect = (event: InspectionEvent) => {
      if (event.type === '@xstate.event' && event.event.type.endsWith('.done')) replies.push(event.event.type);
    };
    const actor = createActor(agentMachine.provide({ actors: { phases: phaseRunner(implementations) } }), { input, inspect });
    actor.start();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(signal?.aborted).toBe(false);
    actor.send({ type: 'agent.cancel' });
    expect(signal?.aborted).toBe(true);
    finishLate();
    const output = await toPromise(actor);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(output.reason).toBe('cancelled');
    expect(output.text).toBeNull();
    expect(replies).toEqual(['hydrate.done']);
  });

  it('fails the run with the phase error, naming what to provide when a phase has no implementation', async () => {
    const actor = createActor(agentMachine.provide({ actors: { phases: phaseRunner({ reason: counting(1).reason }) } }), { input });
    actor.start();
    const output = await toPromise(actor);
    expect(output.reason).toBe('error');
    expect(output.errorData).toMatchObject({ name: 'ConfigurationError', code: 'configuration' });
    expect(output.errorData?.message).toMatch(/"gate" phase has no implementation: supply one with agentMachine\.provide/);
    expect((output.error as { runId?: string }).runId).toBe('run_pr');
  });

  it('fails the run when a phase throws synchronously instead of rejecting', async () => {
    const actor = createActor(
      agentMachine.provide({
        actors: {
          phases: phaseRunner({
            ...counting(1),
            gate: () => {
              throw new TypeError('gate exploded');
            },
          }),
        },
      }),
      { input },
    );
    actor.start();
    const output = await toPromise(actor);
    expect(output.reason).toBe('error');
    expect(output.errorData).toMatchObject({ name: 'TypeError', message: 'gate exploded' });
  });

  it('hands each phase that reads its signal a signal of its own, left alone when the phase ends', async () => {
    const signals: AbortSignal[] = [];
    let heard = 0;
    const base = counting(3);
    const implementations: PhaseImplementations = {
      ...base,
      reason: (args) => {
        signals.push(args.signal);
        // The second model call subscribes and never unsubscribes (as some HTTP clients do).
        if (args.input.iteration === 1) args.signal.addEventListener('abort', () => heard++);
        return base.reason(args);
      },
    };
    const actor = createActor(agentMachine.provide({ actors: { phases: phaseRunner(implementations) } }), { input });
    actor.start();
    await toPromise(actor);
    expect(signals).toHaveLength(4);
    expect(new Set(signals).size).toBe(4);
    expect(signals.every((signal) => !signal.aborted)).toBe(true);
    expect(heard).toBe(0);
  });

  it('with `listening`, hands consecutive phases one signal while nothing listens to it, and a new one once something does', async () => {
    const signals: AbortSignal[] = [];
    const leaked = () => undefined;
    const base = counting(3);
    const implementations: PhaseImplementations = {
      ...base,
      reason: (args) => {
        signals.push(args.signal);
        // The second model call subscribes and never unsubscribes (as some HTTP clients do).
        if (args.input.iteration === 1) args.signal.addEventListener('abort', leaked);
        return base.reason(args);
      },
    };
    const listening = (signal: AbortSignal) => getEventListeners(signal, 'abort').length > 0;
    const actor = createActor(agentMachine.provide({ actors: { phases: phaseRunner(implementations, { listening }) } }), { input });
    actor.start();
    await toPromise(actor);
    expect(signals).toHaveLength(4);
    expect(signals[1]).toBe(signals[0]);
    expect(signals[2]).not.toBe(signals[1]); // the leaked listener keeps its signal to itself
    expect(signals[3]).toBe(signals[2]);
    expect(signals.every((signal) => !signal.aborted)).toBe(true);
  });

  it('fails the run, not the host, when the worker itself fails', async () => {
    // XState warns that the machine's request reached the failed worker; expected here.
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const broken = fromCallback(() => {
      throw new Error('worker broke');
    }) as unknown as PhaseRunnerLogic;
    const actor = createActor(agentMachine.provide({ actors: { phases: broken } }), { input });
    actor.start();
    const output = await toPromise(actor);
    expect(output.reason).toBe('error');
    expect(output.errorData?.message).toBe('worker broke');
    warn.mockRestore();
  });
});
