/**
 * A strategy run is one actor tree: each branch's sub-agent runs in the runner's actor system,
 * its parent chain leads to the runner, and the runner's inspector sees every actor of the run.
 */
import type { AnyActorRef, InspectionEvent } from 'xstate';
import { describe, expect, it } from 'vitest';
import { startStrategy, strategies } from '../../src/strategies/index.ts';
import type { ConfiguredStrategy } from '../../src/core/strategy.ts';
import { answering } from './support.ts';

const six: [string, ConfiguredStrategy<unknown, unknown>][] = [
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

/** The chain of parents from `actor` up to its root. */
function ancestors(actor: AnyActorRef): AnyActorRef[] {
  const chain: AnyActorRef[] = [];
  for (let parent = actor._parent; parent !== undefined; parent = parent._parent) chain.push(parent);
  return chain;
}

describe('one actor system per strategy run', () => {
  it.each(six)('%s: every sub-agent runs in the runner system, under the runner', async (_name, strategy) => {
    const actors = new Set<AnyActorRef>();
    const run = startStrategy({
      strategy,
      task: 'answer',
      subAgent: answering((branch) => `answer ${branch.id}`),
      inspect: (event: InspectionEvent) => {
        if (event.type === '@xstate.actor') actors.add(event.actorRef as AnyActorRef);
      },
    });
    const result = await run.settled;
    expect(result.status, result.error?.message).toBe('done');

    const agentRuns = [...actors].filter((actor) => (actor.src as { id?: string }).id === 'agent');
    const branches = result.events.filter((entry) => entry.event.type === 'branch.finished');
    expect(agentRuns.length).toBeGreaterThan(0);
    expect(agentRuns.length).toBe(branches.length);
    for (const actor of actors) expect(actor.system).toBe(run.actor.system);
    for (const agentRun of agentRuns) {
      const chain = ancestors(agentRun);
      expect(chain.at(-1)).toBe(run.actor);
      // The branch actor that started it is a child of the runner.
      expect(chain[0]?._parent).toBe(run.actor);
    }
  });
});
