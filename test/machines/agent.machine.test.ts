import { createActor, SimulatedClock, toPromise, waitFor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { agentMachine } from '../../machines/agent.machine.ts';
import { phase, phaseRunner } from '../../machines/phaseRunner.ts';
import type { AgentMachineInput } from '../../machines/agent.types.ts';
import type { ActInput, ActOutput, GateInput, GateOutput, PlannedCall, ReasonInput, ReasonOutput } from '../../src/core/run.ts';
import type { ToolCall } from '../../src/core/messages.ts';
import type { LoopEvent } from '../../src/core/loopEvent.ts';

const usage = (n: number) => ({ promptTokens: n, completionTokens: 0, totalTokens: n });
const call = (id: string, name = 'echo', args = '{}'): ToolCall => ({ id, name, arguments: args });

type Reply = Partial<ReasonOutput>;

/** A machine whose reason actor answers from a scripted list, gate allows all, act echoes. */
function scriptedLoop(
  replies: Reply[] | ((input: ReasonInput) => Reply),
  overrides: {
    gate?: (input: GateInput) => PlannedCall[];
    act?: (input: ActInput, signal: AbortSignal) => Promise<ActOutput>;
    reasonDelayMs?: number;
  } = {},
) {
  let i = 0;
  const reasonSignals: AbortSignal[] = [];
  const actSignals: AbortSignal[] = [];
  const machine = agentMachine.provide({
    actors: {
      phases: phaseRunner({
        reason: phase<ReasonOutput, ReasonInput>(async ({ input, signal }) => {
          reasonSignals.push(signal);
          if (overrides.reasonDelayMs !== undefined) {
            await new Promise((resolve) => setTimeout(resolve, overrides.reasonDelayMs));
          }
          const reply = typeof replies === 'function' ? replies(input) : replies[i++];
          if (reply === undefined) throw new Error('script exhausted');
          return { text: null, toolCalls: [], usage: usage(10), costUsd: 0, ...reply };
        }),
        gate: phase<GateOutput, GateInput>(async ({ input }) => ({
          plan: overrides.gate?.(input) ?? input.calls.map((c): PlannedCall => ({ call: c, arguments: {}, verdict: 'run' })),
        })),
        act: phase<ActOutput, ActInput>(async ({ input, signal }) => {
          actSignals.push(signal);
          if (overrides.act !== undefined) return overrides.act(input, signal);
          return {
            outcomes: input.calls.map((c) => ({ toolCallId: c.call.id, tool: c.call.name, status: 'ok' as const, content: `ran ${c.call.id}`, isError: false })),
          };
        }),
      }),
    },
  });
  return { machine, reasonSignals, actSignals };
}

const input = (limits: Partial<AgentMachineInput['limits']> = {}): AgentMachineInput => ({
  runId: 'run-1',
  agentId: 'agent-1',
  task: 'do it',
  system: 'be brief',
  model: 'test-model',
  toolNames: ['echo'],
  limits: { maxIterations: 25, maxTotalTokens: 100_000, timeoutMs: 300_000, maxRepairTurns: 3, ...limits },
});

function run(machine: ReturnType<typeof scriptedLoop>['machine'], inp = input(), clock?: SimulatedClock) {
  const events: LoopEvent[] = [];
  const actor = createActor(machine, { input: inp, ...(clock ? { clock } : {}) });
  actor.on('*', (e) => events.push(e));
  actor.start();
  return { actor, events };
}

describe('agent machine', () => {
  it('ends in done with the final answer when the model replies without tool calls', async () => {
    const { machine } = scriptedLoop([{ text: 'the answer' }]);
    const { actor, events } = run(machine);
    const output = await toPromise(actor);
    expect(actor.getSnapshot().value).toBe('done');
    expect(output.reason).toBe('final_answer');
    expect(output.text).toBe('the answer');
    expect(output.iterations).toBe(1);
    expect(output.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant']);
    expect(events.map((e) => e.type)).toEqual(['run.started', 'phase.entered', 'phase.entered', 'reasoning.completed', 'run.terminated']);
  });

  it('walks reason → gate → act → observe → reason and appends results in call order', async () => {
    const { machine } = scriptedLoop([{ toolCalls: [call('a'), call('b')] }, { text: 'done' }]);
    const { actor, events } = run(machine);
    const output = await toPromise(actor);
    expect(output.reason).toBe('final_answer');
    expect(output.iterations).toBe(2);
    const phases = events.filter((e) => e.type === 'phase.entered').map((e) => (e as { phase: string }).phase);
    expect(phases).toEqual(['hydrate', 'reason', 'gate', 'act', 'observe', 'reason']);
    const tools = output.messages.filter((m) => m.role === 'tool');
    expect(tools.map((m) => (m as { toolCallId: string }).toolCallId)).toEqual(['a', 'b']);
    expect(tools.map((m) => m.content)).toEqual(['ran a', 'ran b']);
  });

  it('accumulates usage across iterations', async () => {
    const { machine } = scriptedLoop([{ toolCalls: [call('a')], usage: usage(7), costUsd: 0.5 }, { text: 'ok', usage: usage(5), costUsd: 0.25 }]);
    const output = await toPromise(run(machine).actor);
    expect(output.usage.totalTokens).toBe(12);
    expect(output.costUsd).toBeCloseTo(0.75);
  });

  it('fails with max_iterations when the model never answers', async () => {
    let n = 0;
    const { machine } = scriptedLoop(() => ({ toolCalls: [call(`c${n++}`)] }));
    const { actor, events } = run(machine, input({ maxIterations: 4 }));
    const output = await toPromise(actor);
    expect(actor.getSnapshot().value).toBe('failed');
    expect(output.reason).toBe('max_iterations');
    expect(output.iterations).toBe(4);
    expect(events.at(-1)).toMatchObject({ type: 'run.terminated', reason: 'max_iterations', iterations: 4 });
  });

  it('fails with max_tokens once total usage reaches the budget', async () => {
    let n = 0;
    const { machine } = scriptedLoop(() => ({ toolCalls: [call(`c${n++}`)], usage: usage(400) }));
    const output = await toPromise(run(machine, input({ maxTotalTokens: 1000 })).actor);
    expect(output.reason).toBe('max_tokens');
    expect(output.iterations).toBe(3);
    expect(output.usage.totalTokens).toBe(1200);
  });

  it('fails with timeout when the wall-clock budget runs out, and aborts the model call', async () => {
    const clock = new SimulatedClock();
    const { machine, reasonSignals } = scriptedLoop(() => ({ text: 'never' }), { reasonDelayMs: 10_000_000 });
    const { actor } = run(machine, input({ timeoutMs: 1000 }), clock);
    await waitFor(actor, (s) => s.matches({ running: 'reason' }));
    clock.increment(999);
    expect(actor.getSnapshot().status).toBe('active');
    clock.increment(1);
    const output = await toPromise(actor);
    expect(output.reason).toBe('timeout');
    expect(reasonSignals[0]?.aborted).toBe(true);
  });

  it('cancels from any phase, aborting the running tool calls', async () => {
    const { machine, actSignals } = scriptedLoop([{ toolCalls: [call('slow')] }], {
      act: (_input, signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
    });
    const { actor, events } = run(machine);
    await waitFor(actor, (s) => s.matches({ running: 'act' }));
    actor.send({ type: 'agent.cancel' });
    const output = await toPromise(actor);
    expect(actor.getSnapshot().value).toBe('cancelled');
    expect(output.reason).toBe('cancelled');
    expect(actSignals[0]?.aborted).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'run.terminated', reason: 'cancelled' });
  });

  it('fails with the error when the model call fails', async () => {
    const boom = new Error('provider down');
    const machine = agentMachine.provide({
      actors: { phases: phaseRunner({ reason: phase<ReasonOutput, ReasonInput>(async () => Promise.reject(boom)) }) },
    });
    const actor = createActor(machine, { input: input() }).start();
    const output = await toPromise(actor);
    expect(output.reason).toBe('error');
    expect(output.error).toBe(boom);
    expect(output.errorData).toMatchObject({ message: 'provider down' });
  });

  it('fails with model_behavior after more repair turns than allowed', async () => {
    let n = 0;
    const { machine } = scriptedLoop(() => ({ toolCalls: [call(`bad${n++}`, 'echo', '{oops')] }), {
      gate: (inp) => inp.calls.map((c) => ({ call: c, arguments: undefined, verdict: 'blocked', blockedBy: 'invalid_arguments', note: 'bad json' })),
    });
    const output = await toPromise(run(machine, input({ maxRepairTurns: 2 })).actor);
    expect(output.reason).toBe('model_behavior');
    expect(output.iterations).toBe(3);
    const toolMessages = output.messages.filter((m) => m.role === 'tool');
    expect(toolMessages.every((m) => m.content === 'bad json' && (m as { isError?: boolean }).isError === true)).toBe(true);
  });

  it('feeds a denial back to the model without running the call', async () => {
    const acted: string[] = [];
    const { machine } = scriptedLoop([{ toolCalls: [call('x'), call('y')] }, { text: 'fine' }], {
      gate: (inp) => [
        { call: inp.calls[0] as ToolCall, arguments: undefined, verdict: 'blocked', blockedBy: 'policy', note: 'Denied by policy: no' },
        { call: inp.calls[1] as ToolCall, arguments: {}, verdict: 'run' },
      ],
      act: async (inp) => {
        acted.push(...inp.calls.map((c) => c.call.id));
        return { outcomes: inp.calls.map((c) => ({ toolCallId: c.call.id, tool: 'echo', status: 'ok' as const, content: 'ok', isError: false })) };
      },
    });
    const output = await toPromise(run(machine).actor);
    expect(acted).toEqual(['y']);
    const tools = output.messages.filter((m) => m.role === 'tool');
    expect(tools[0]).toMatchObject({ toolCallId: 'x', content: 'Denied by policy: no', isError: true });
    expect(tools[1]).toMatchObject({ toolCallId: 'y', content: 'ok' });
  });

  it('waits in awaitingHuman for confirmation; approve runs the call', async () => {
    const { machine } = scriptedLoop([{ toolCalls: [call('c1')] }, { text: 'ok' }], {
      gate: (inp) => inp.calls.map((c) => ({ call: c, arguments: {}, verdict: 'confirm' })),
    });
    const { actor, events } = run(machine);
    await waitFor(actor, (s) => s.matches({ running: 'awaitingHuman' }));
    expect(events).toContainEqual({ type: 'human.awaiting', kind: 'confirmation', toolCallIds: ['c1'] });
    actor.send({ type: 'agent.approve' });
    const output = await toPromise(actor);
    expect(output.messages.find((m) => m.role === 'tool')).toMatchObject({ content: 'ran c1' });
  });

  it('waits in awaitingHuman for confirmation; reject feeds the rejection back', async () => {
    const { machine } = scriptedLoop([{ toolCalls: [call('c1')] }, { text: 'ok' }], {
      gate: (inp) => inp.calls.map((c) => ({ call: c, arguments: {}, verdict: 'confirm' })),
    });
    const { actor } = run(machine);
    await waitFor(actor, (s) => s.matches({ running: 'awaitingHuman' }));
    actor.send({ type: 'agent.reject', reason: 'too risky' });
    const output = await toPromise(actor);
    const tool = output.messages.find((m) => m.role === 'tool');
    expect(tool).toMatchObject({ isError: true });
    expect(tool?.content).toContain('too risky');
  });

  it('escalated failures wait for a human; approve runs the call again', async () => {
    let attempts = 0;
    const { machine } = scriptedLoop([{ toolCalls: [call('e1')] }, { text: 'ok' }], {
      act: async (inp) => {
        attempts++;
        const c = inp.calls[0] as ActInput['calls'][number];
        return attempts === 1
          ? { outcomes: [{ toolCallId: c.call.id, tool: 'echo', status: 'escalate' as const, content: 'broke', isError: true }] }
          : { outcomes: [{ toolCallId: c.call.id, tool: 'echo', status: 'ok' as const, content: 'second time lucky', isError: false }] };
      },
    });
    const { actor, events } = run(machine);
    await waitFor(actor, (s) => s.matches({ running: 'awaitingHuman' }));
    expect(events).toContainEqual({ type: 'human.awaiting', kind: 'escalation', toolCallIds: ['e1'] });
    actor.send({ type: 'agent.approve' });
    const output = await toPromise(actor);
    expect(attempts).toBe(2);
    expect(output.messages.find((m) => m.role === 'tool')).toMatchObject({ content: 'second time lucky' });
  });

  it('records a missing executor outcome as an error instead of looping', async () => {
    const { machine } = scriptedLoop([{ toolCalls: [call('m1')] }, { text: 'ok' }], { act: async () => ({ outcomes: [] }) });
    const output = await toPromise(run(machine).actor);
    expect(output.messages.find((m) => m.role === 'tool')).toMatchObject({ isError: true });
  });

  it('persists and restores mid-run with every child referenced by name', async () => {
    const { machine } = scriptedLoop([{ toolCalls: [call('p1')] }, { text: 'after restore' }], {
      gate: (inp) => inp.calls.map((c) => ({ call: c, arguments: {}, verdict: 'confirm' })),
    });
    const { actor } = run(machine);
    await waitFor(actor, (s) => s.matches({ running: 'awaitingHuman' }));
    const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
    actor.stop();
    const restored = createActor(machine, { input: input(), snapshot: persisted }).start();
    expect(restored.getSnapshot().matches({ running: 'awaitingHuman' })).toBe(true);
    restored.send({ type: 'agent.approve' });
    const output = await toPromise(restored);
    expect(output.text).toBe('after restore');
  });
});
