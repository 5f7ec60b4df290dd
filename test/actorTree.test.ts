/**
 * One actor tree, seen only through XState's inspection events: a strategy run is runner →
 * branch → agent loop → its phase worker; an agent system is root → host → task → agent loop.
 * Every actor shares its run's system, every sub-agent's parent chain leads to its runner or
 * caller, messages between agents are events between their actors, and stopping a parent stops
 * its subtree through XState.
 */
import type { AnyActorRef, InspectionEvent } from 'xstate';
import { afterEach, describe, expect, it } from 'vitest';
import { startStrategy, strategies } from '../src/strategies/index.ts';
import { createAgentSystem } from '../src/system/createAgentSystem.ts';
import type { AgentSystem } from '../src/system/types.ts';
import type { ConfiguredStrategy } from '../src/core/strategy.ts';
import type { JournalEntry } from '../src/core/loopEvent.ts';
import { scriptedModel } from '../src/testing/index.ts';
import { answering } from './strategies/support.ts';

/** Everything an inspector saw: actors, the events sent between them, their snapshots. */
function recorder() {
  const actors = new Set<AnyActorRef>();
  const events: { from: AnyActorRef | undefined; to: AnyActorRef; type: string; event: Record<string, unknown> }[] = [];
  const children = new Map<AnyActorRef, Set<AnyActorRef>>();
  const inspect = (e: InspectionEvent) => {
    const actor = e.actorRef as AnyActorRef;
    actors.add(actor);
    if (e.type === '@xstate.event') events.push({ from: e.sourceRef as AnyActorRef | undefined, to: actor, type: e.event.type, event: e.event as Record<string, unknown> });
    if (e.type === '@xstate.snapshot') {
      const kids = (e.snapshot as { children?: Record<string, AnyActorRef | undefined> }).children ?? {};
      for (const kid of Object.values(kids)) if (kid !== undefined) (children.get(actor) ?? children.set(actor, new Set()).get(actor))?.add(kid);
    }
  };
  const isLoop = (a: AnyActorRef) => (a.src as { id?: string }).id === 'agent';
  return { inspect, actors, events, children, loops: () => [...actors].filter(isLoop) };
}

function ancestors(actor: AnyActorRef): AnyActorRef[] {
  const chain: AnyActorRef[] = [];
  for (let parent = actor._parent; parent !== undefined; parent = parent._parent) chain.push(parent);
  return chain;
}

const status = (actor: AnyActorRef) => (actor.getSnapshot() as { status: string }).status;

const six = [
  ['chain', strategies.chain({ steps: 2, via: 'agent' })],
  ['vote', strategies.vote({ samples: 3 })],
  ['tree', strategies.tree({ breadth: 2, depth: 2, beamWidth: 1, scorer: (t) => t.content.length })],
  ['graph', strategies.graph({ breadth: 2, mergeTop: 2, scorer: () => 1, merge: (ts) => ts.map((t) => t.content).join('+') })],
  ['refine', strategies.refine({ maxRevisions: 1, critique: () => 'ACCEPT' })],
  [
    'adaptive',
    strategies.adaptive({
      difficulty: () => 5,
      routes: { easy: strategies.vote({ samples: 1 }), medium: strategies.vote({ samples: 2 }), hard: strategies.tree({ breadth: 2, depth: 1, beamWidth: 1, scorer: () => 1 }) },
    }),
  ],
] as [string, ConfiguredStrategy<unknown, unknown>][];

describe('a strategy run is one actor tree', () => {
  it.each(six)('%s: runner → branch → agent loop → phases, in one system, talking in events', async (_name, strategy) => {
    const seen = recorder();
    const run = startStrategy({ strategy, task: 'answer', subAgent: answering((branch) => `answer ${branch.id}`), inspect: seen.inspect });
    const result = await run.settled;
    expect(result.status, result.error?.message).toBe('done');

    for (const actor of seen.actors) expect(actor.system === run.actor.system, actor.id).toBe(true);
    const loops = seen.loops();
    expect(loops.length).toBe(result.events.filter((e) => e.event.type === 'branch.finished').length);
    for (const loop of loops) {
      const [branch, runner] = ancestors(loop);
      expect(runner).toBe(run.actor);
      // Real children, not just parented: each is in its parent's children while it runs.
      expect(seen.children.get(branch as AnyActorRef)?.has(loop)).toBe(true);
      expect(seen.children.get(run.actor)?.has(branch as AnyActorRef)).toBe(true);
      expect([...(seen.children.get(loop) ?? [])].map((kid) => kid.id)).toContain('phases');
      // The loop is addressable in the system by its run id.
      expect(typeof (loop as { systemId?: string }).systemId).toBe('string');
      // The loop reports its end to its branch, the branch its thought to the runner: as events.
      expect(seen.events.some((e) => e.from === loop && e.to === branch && e.type === `xstate.done.actor.${loop.id}`)).toBe(true);
      expect(seen.events.some((e) => e.from === branch && e.to === run.actor && e.type === `xstate.done.actor.${(branch as AnyActorRef).id}`)).toBe(true);
    }
    // Finished branches were stopped and removed: nothing of the run is left running.
    expect([...seen.actors].filter((a) => status(a) === 'active')).toEqual([]);
    expect(Object.keys(run.actor.getSnapshot().children)).toEqual([]);
  });

  it('cancelling the runner stops every branch and its agent loop through XState', async () => {
    const seen = recorder();
    const entries: JournalEntry[] = [];
    // Each branch's model never answers by itself: only stopping the run ends it.
    const run = startStrategy({
      strategy: strategies.vote({ samples: 3 }),
      task: 'answer',
      subAgent: answering(() => ({ text: 'never', delayMs: 600_000 })),
      inspect: seen.inspect,
    });
    run.events$.subscribe((entry) => entries.push(entry));
    await until(() => seen.loops().length === 3 && entries.filter((e) => e.event.type === 'phase.entered' && e.event.phase === 'reason').length === 3);
    run.cancel('enough');
    const result = await run.settled;

    expect(result.status).toBe('cancelled');
    for (const loop of seen.loops()) expect(status(loop)).toBe('stopped');
    // Each stopped run still ends its journal: cancelled.
    const ends = entries.filter((e) => e.event.type === 'run.terminated' && e.runId !== result.runId);
    expect(ends.map((e) => (e.event as { reason: string }).reason)).toEqual(['cancelled', 'cancelled', 'cancelled']);
  });
});

const systems: AgentSystem[] = [];
afterEach(() => {
  for (const system of systems.splice(0)) system.stopAll();
});

function inspectedSystem() {
  const seen = recorder();
  const system = createAgentSystem({ inspect: seen.inspect });
  systems.push(system);
  return { system, seen };
}

describe('an agent system is one actor tree', () => {
  it('ask is a request event with a correlation id, answered by a reply event to the asker', async () => {
    const { system, seen } = inspectedSystem();
    const worker = system.spawn('worker', { model: scriptedModel([{ text: 'done' }]) });
    const result = await system.ask('worker', 'do it');

    const request = seen.events.find((e) => e.type === 'agent.ask');
    const task = request?.event.task as { taskId: string; runId: string };
    expect(request?.from).toBe(system.actor);
    expect(request?.to).toBe(worker.actor);
    const reply = seen.events.find((e) => e.type === 'agent.reply');
    expect(reply?.from).toBe(worker.actor);
    expect(reply?.to).toBe(system.actor);
    expect((reply?.event.report as { task: { taskId: string } }).task.taskId).toBe(task.taskId);
    expect(task.runId).toBe(result.runId);

    const [loop] = seen.loops();
    expect(loop?.system).toBe(system.actor.system);
    // agent loop → task → host → root
    expect(ancestors(loop as AnyActorRef).map((a) => a.id)).toEqual([task.taskId, 'worker', system.actor.id]);
  });

  it('tell is an event from the sender, with no reply', async () => {
    const { system, seen } = inspectedSystem();
    const lead = system.spawn('lead', { model: scriptedModel([]) });
    const worker = system.spawn('worker', { model: scriptedModel([{ text: 'noted' }]) });
    const receipt = system.tell('worker', 'note this', { from: 'lead' });
    await until(() => seen.loops().some((loop) => status(loop) === 'done'));

    const tell = seen.events.find((e) => e.type === 'agent.tell');
    expect(tell?.from).toBe(lead.actor);
    expect(tell?.to).toBe(worker.actor);
    expect((tell?.event.task as { taskId: string }).taskId).toBe(receipt.correlationId);
    expect(seen.events.some((e) => e.type === 'agent.reply')).toBe(false);
  });

  it("delegation is an ask from the delegating agent's host, answered to it", async () => {
    const { system, seen } = inspectedSystem();
    const helper = system.spawn('helper', { model: scriptedModel([{ text: 'helper found 42' }]) });
    const lead = system.spawn('lead', {
      model: scriptedModel([{ toolCalls: [{ name: 'delegate_to_helper', arguments: { task: 'find it' } }] }, { text: 'lead is done' }]),
      tools: [system.delegateTool('helper')],
    });
    await system.ask('lead', 'solve it');

    const asks = seen.events.filter((e) => e.type === 'agent.ask');
    expect(asks.map((e) => [e.from, e.to])).toEqual([
      [system.actor, lead.actor],
      [lead.actor, helper.actor],
    ]);
    const delegation = asks[1]?.event.task as { taskId: string; kind: string };
    expect(delegation.kind).toBe('delegate');
    const reply = seen.events.find((e) => e.type === 'agent.reply' && (e.event.report as { task: { taskId: string } }).task.taskId === delegation.taskId);
    expect([reply?.from, reply?.to]).toEqual([helper.actor, lead.actor]);
    // A tool's circuit breaker belongs to its agent, shared by all its runs: its own root.
    const ofRuns = [...seen.actors].filter((actor) => (actor.src as { id?: string }).id !== 'circuitBreaker');
    for (const actor of ofRuns) expect(actor.system === system.actor.system, actor.id).toBe(true);
    for (const loop of seen.loops()) expect(ancestors(loop).at(-1)).toBe(system.actor);
  });

  it("stopping an agent stops its host's task and agent loop through XState", async () => {
    const { system, seen } = inspectedSystem();
    system.spawn('worker', { model: scriptedModel([{ text: 'never', delayMs: 600_000 }]) });
    const answer = system.ask('worker', 'wait forever');
    await until(() => seen.loops().length === 1);
    system.stop('worker');

    await expect(answer).rejects.toMatchObject({ code: 'agent_stopped' });
    const [loop] = seen.loops();
    expect(status(loop as AnyActorRef)).toBe('stopped');
    expect(Object.keys(system.actor.getSnapshot().children)).toEqual([]);
  });
});

/** Waits until `done()` holds, polling on the event loop (no wall-clock margin). */
async function until(done: () => boolean, attempts = 2_000): Promise<void> {
  for (let i = 0; i < attempts && !done(); i++) await new Promise((resolve) => setImmediate(resolve));
  expect(done()).toBe(true);
}
