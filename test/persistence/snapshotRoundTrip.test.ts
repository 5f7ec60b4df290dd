/**
 * the agent machine's persisted snapshot survives JSON.stringify/parse. Restoring does not re-run
 * entry actions, re-runs the phase that was in flight, can be persisted and restored again, and
 * every persisted child names its `src`.
 */
import { createActor, toPromise, waitFor, type Snapshot } from 'xstate';
import { describe, expect, it } from 'vitest';
import { agentMachine } from '../../machines/agent.machine.ts';
import { phase, phaseRunner } from '../../machines/phaseRunner.ts';
import type { AgentMachineInput, AgentOutput } from '../../machines/agent.types.ts';
import type { ActInput, ActOutput, GateInput, GateOutput, PlannedCall, ReasonInput, ReasonOutput } from '../../src/core/run.ts';
import type { Message, ToolCall } from '../../src/core/messages.ts';
import type { LoopEvent } from '../../src/core/loopEvent.ts';

type Persisted = Record<string, unknown> & {
  children: Record<string, { src: unknown; snapshot: { status: string; job?: { phase: string; input: unknown } | null } }>;
  context: { messages: Message[] };
};

const NAMED_SOURCES = ['phases'];
const usage = { promptTokens: 5, completionTokens: 5, totalTokens: 10 };
const call = (id: string, name: string): ToolCall => ({ id, name, arguments: `{"id":"${id}"}` });

const input: AgentMachineInput = {
  runId: 'run_rt',
  agentId: 'agent_rt',
  task: 'round trip',
  system: 'be brief',
  model: 'test-model',
  toolNames: ['work', 'confirm_me'],
  limits: { maxIterations: 10, maxTotalTokens: 100_000, timeoutMs: 300_000, maxRepairTurns: 3 },
};

/**
 * The machine with scripted actors. Replies are chosen by iteration, so a restarted `reason`
 * gives the same answer; `act` holds until released, so a test can persist it in flight.
 */
function harness(replies: Array<Partial<ReasonOutput>>, options: { holdAct?: boolean } = {}) {
  const actStarts: ActInput[] = [];
  const actSignals: AbortSignal[] = [];
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = options.holdAct === true ? resolve : () => undefined));
  if (options.holdAct !== true) release();
  const machine = agentMachine.provide({
    actors: {
      phases: phaseRunner({
        reason: phase<ReasonOutput, ReasonInput>(async ({ input: { iteration } }) => {
          const reply = replies[iteration];
          if (reply === undefined) throw new Error(`no reply for iteration ${iteration}`);
          return { text: null, toolCalls: [], usage, costUsd: 0, ...reply };
        }),
        gate: phase<GateOutput, GateInput>(async ({ input: { calls } }) => ({
          plan: calls.map((c): PlannedCall => ({ call: c, arguments: JSON.parse(c.arguments) as unknown, verdict: c.name === 'confirm_me' ? 'confirm' : 'run' })),
        })),
        act: phase<ActOutput, ActInput>(async ({ input: actInput, signal }) => {
          actStarts.push(actInput);
          actSignals.push(signal);
          if (options.holdAct === true) {
            await Promise.race([released, new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)))]);
          }
          return {
            outcomes: actInput.calls.map((c) => ({ toolCallId: c.call.id, tool: c.call.name, status: 'ok' as const, content: `did ${c.call.id}`, isError: false })),
          };
        }),
      }),
    },
  });

  function start(snapshot?: unknown) {
    const events: LoopEvent[] = [];
    const actor = createActor(machine, { input, ...(snapshot === undefined ? {} : { snapshot: snapshot as Snapshot<unknown> }) });
    actor.on('*', (event) => events.push(event));
    actor.start();
    return { actor, events };
  }
  return { start, actStarts, actSignals, release: () => release() };
}

/** What goes to disk and back: the persisted snapshot through JSON. */
function persist(actor: ReturnType<ReturnType<typeof harness>['start']>['actor']): Persisted {
  return JSON.parse(JSON.stringify(actor.getPersistedSnapshot())) as Persisted;
}

async function uninterrupted(replies: Array<Partial<ReasonOutput>>): Promise<AgentOutput> {
  const { actor } = harness(replies).start();
  const approveWhenAsked = actor.subscribe((s) => {
    if (s.matches({ running: 'awaitingHuman' })) actor.send({ type: 'agent.approve' });
  });
  const output = await toPromise(actor);
  approveWhenAsked.unsubscribe();
  return output;
}

const stable = (output: AgentOutput) => ({ reason: output.reason, text: output.text, iterations: output.iterations, messages: output.messages, usage: output.usage });
const count = (events: readonly LoopEvent[], type: LoopEvent['type'], phase?: string) =>
  events.filter((e) => e.type === type && (phase === undefined || (e.type === 'phase.entered' && e.phase === phase))).length;

describe('agent snapshot round trip', () => {
  it('restores awaitingHuman without re-running entry actions and finishes like an uninterrupted run', async () => {
    const replies = [{ toolCalls: [call('h1', 'confirm_me')] }, { text: 'all done' }];
    const loop = harness(replies);
    const first = loop.start();
    await waitFor(first.actor, (s) => s.matches({ running: 'awaitingHuman' }), { timeout: 2_000 });
    const persisted = persist(first.actor);
    first.actor.stop();
    expect(count(first.events, 'phase.entered', 'awaitingHuman')).toBe(1);
    // No phase runs while a human decides: the worker is persisted idle, so nothing re-runs.
    expect(persisted.children['phases']?.snapshot.job).toBeNull();

    const second = loop.start(persisted);
    expect(second.actor.getSnapshot().matches({ running: 'awaitingHuman' })).toBe(true);
    expect(second.events).toEqual([]); // no run.started, phase.entered or human.awaiting again
    expect(second.actor.getSnapshot().context).toEqual(persisted.context);

    second.actor.send({ type: 'agent.approve' });
    const output = await toPromise(second.actor);
    expect(count(second.events, 'run.started')).toBe(0);
    expect(count(second.events, 'phase.entered', 'awaitingHuman')).toBe(0);
    expect(second.events[0]).toMatchObject({ type: 'human.decided', decision: 'approve', toolCallIds: ['h1'] });
    expect(stable(output)).toEqual(stable(await uninterrupted(replies)));
  });

  it('restores act by re-running its in-flight phase, and persists and restores again before finishing', async () => {
    const replies = [{ toolCalls: [call('a1', 'work'), call('a2', 'work')] }, { text: 'worked' }];
    const loop = harness(replies, { holdAct: true });
    const first = loop.start();
    await waitFor(first.actor, (s) => s.matches({ running: 'act' }), { timeout: 2_000 });
    const inAct = persist(first.actor);
    expect(Object.values(inAct.children)).toEqual([
      expect.objectContaining({ src: 'phases', snapshot: expect.objectContaining({ status: 'active', job: expect.objectContaining({ phase: 'act' }) }) }),
    ]);
    first.actor.stop(); // persist before stop: the snapshot above records a live child
    expect(loop.actSignals[0]?.aborted).toBe(true);

    const second = loop.start(inAct);
    expect(loop.actStarts).toHaveLength(2); // the in-flight phase re-ran…
    expect(loop.actStarts[1]).toEqual(loop.actStarts[0]); // …with the input it was persisted with
    expect(second.events).toEqual([]); // …without re-running act's entry actions
    expect(second.actor.getSnapshot().matches({ running: 'act' })).toBe(true);

    // Re-persist after restore, and restore that.
    const again = persist(second.actor);
    expect(again).toEqual(inAct);
    second.actor.stop();

    const third = loop.start(again);
    expect(loop.actStarts).toHaveLength(3);
    expect(loop.actStarts[2]).toEqual(loop.actStarts[0]);
    loop.release();
    const output = await toPromise(third.actor);

    const all = [...first.events, ...second.events, ...third.events];
    expect(count(all, 'run.started')).toBe(1);
    expect(count(all, 'phase.entered', 'act')).toBe(1);
    expect(count(all, 'tools.dispatched')).toBe(1);
    expect(count(all, 'run.terminated')).toBe(1);
    expect(stable(output)).toEqual(stable(await uninterrupted(replies)));
  });

  it('persists every child by a src name registered in setup', async () => {
    const replies = [{ toolCalls: [call('w1', 'work')] }, { toolCalls: [call('c1', 'confirm_me'), call('w2', 'work')] }, { text: 'end' }];
    const { actor } = harness(replies).start();
    const persisted: Persisted[] = [persist(actor)];
    actor.subscribe((s) => {
      if (s.status !== 'active') return;
      persisted.push(persist(actor));
      if (s.matches({ running: 'awaitingHuman' })) actor.send({ type: 'agent.approve' });
    });
    await toPromise(actor);

    const sources = new Set<unknown>();
    const jobs = new Set<string>();
    for (const snapshot of persisted) {
      for (const child of Object.values(snapshot.children)) {
        expect(typeof child.src).toBe('string');
        expect(NAMED_SOURCES).toContain(child.src);
        sources.add(child.src);
        if (child.snapshot.job) jobs.add(child.snapshot.job.phase);
      }
    }
    expect([...sources].sort()).toEqual([...NAMED_SOURCES].sort());
    // Every phase was persisted in flight at least once: the worker's snapshot names it.
    expect([...jobs].sort()).toEqual(['act', 'gate', 'hydrate', 'reason']);
  });
});
