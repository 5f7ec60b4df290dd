/**
 * The agent machine's `isStuck` guard: an act phase that reports `stuck` ends the run in
 * `failed` with reason `stuck`, after its observations enter the conversation and before any
 * other limit is looked at.
 */
import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { agentMachine } from '../../machines/agent.machine.ts';
import { phase, phaseRunner } from '../../machines/phaseRunner.ts';
import type { AgentMachineInput } from '../../machines/agent.types.ts';
import type { ActInput, ActOutput, GateInput, GateOutput, PlannedCall, ReasonInput, ReasonOutput } from '../../src/core/run.ts';
import type { LoopEvent } from '../../src/core/loopEvent.ts';

const usage = { promptTokens: 1, completionTokens: 0, totalTokens: 1 };

/** The model always calls `echo`; act reports `stuck` on the given act phase (1-based). */
function machineStuckOn(stuckAct: number) {
  let acts = 0;
  return agentMachine.provide({
    actors: {
      phases: phaseRunner({
        reason: phase<ReasonOutput, ReasonInput>(async ({ input }) => ({
          text: null,
          toolCalls: [{ id: `c${input.iteration}`, name: 'echo', arguments: '{}' }],
          usage,
          costUsd: 0,
        })),
        gate: phase<GateOutput, GateInput>(async ({ input }) => ({
          plan: input.calls.map((call): PlannedCall => ({ call, arguments: {}, verdict: 'run' })),
        })),
        act: phase<ActOutput, ActInput>(async ({ input }) => {
          acts++;
          const outcomes = input.calls.map((c) => ({ toolCallId: c.call.id, tool: c.call.name, status: 'ok' as const, content: 'same', isError: false }));
          return acts === stuckAct ? { outcomes, stuck: { reason: 'echo repeated 3 times' } } : { outcomes };
        }),
      }),
    },
  });
}

const input = (limits: Partial<AgentMachineInput['limits']> = {}): AgentMachineInput => ({
  runId: 'run-1',
  agentId: 'agent-1',
  task: 'loop',
  model: 'test-model',
  toolNames: ['echo'],
  limits: { maxIterations: 25, maxTotalTokens: 100_000, timeoutMs: 300_000, maxRepairTurns: 3, ...limits },
});

describe('agent machine: isStuck', () => {
  it('starts with stuck = null', () => {
    const actor = createActor(machineStuckOn(99), { input: input() });
    expect(actor.getSnapshot().context.stuck).toBeNull();
  });

  it('ends in failed with reason stuck once act reports it, after observing its results', async () => {
    const events: LoopEvent[] = [];
    const actor = createActor(machineStuckOn(2), { input: input() });
    actor.on('*', (e) => events.push(e));
    actor.start();
    const output = await toPromise(actor);
    expect(actor.getSnapshot().value).toBe('failed');
    expect(output.reason).toBe('stuck');
    expect(output.iterations).toBe(2);
    expect(output.errorData).toEqual({ name: 'RunError', code: 'stuck', message: 'echo repeated 3 times', blame: 'model' });
    expect(output.error).toBeUndefined();
    expect(output.messages.filter((m) => m.role === 'tool')).toHaveLength(2);
    expect(events.at(-1)).toEqual({
      type: 'run.terminated',
      reason: 'stuck',
      iterations: 2,
      usage: { promptTokens: 2, completionTokens: 0, totalTokens: 2 },
      error: { name: 'RunError', code: 'stuck', message: 'echo repeated 3 times', blame: 'model' },
    });
  });

  it('is checked before the other limits (stuck on the same turn the iteration budget runs out)', async () => {
    const output = await toPromise(createActor(machineStuckOn(3), { input: input({ maxIterations: 3 }) }).start());
    expect(output.reason).toBe('stuck');
  });

  it('survives a JSON round trip of the persisted snapshot (plain data, no Error object)', async () => {
    const actor = createActor(machineStuckOn(1), { input: input() }).start();
    await toPromise(actor);
    const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot())) as { context: { stuck: unknown; termination: unknown } };
    expect(persisted.context.stuck).toBe('echo repeated 3 times');
    expect(persisted.context.termination).toEqual({
      reason: 'stuck',
      errorData: { name: 'RunError', code: 'stuck', message: 'echo repeated 3 times', blame: 'model' },
    });
  });
});
