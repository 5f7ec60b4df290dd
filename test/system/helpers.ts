/**
 * Shared by the agent-system tests: systems that are always stopped, an inspector that keeps
 * every actor it sees, and who owns an actor (which agent, or the root).
 */
import { afterEach } from 'vitest';
import { filter, firstValueFrom, type Observable } from 'rxjs';
import type { ActorRefLike, InspectionEvent } from 'xstate';
import type { JournalEntry, LoopEventOf } from '../../src/core/loopEvent.ts';
import { createAgentSystem } from '../../src/system/createAgentSystem.ts';
import type { AgentSystem } from '../../src/system/types.ts';

const systems: AgentSystem[] = [];
afterEach(() => {
  for (const system of systems.splice(0)) system.stopAll();
});

/** A system stopped after the test, with every actor of it (and of its agents' runs) recorded. */
export function trackedSystem(): { system: AgentSystem; actors: Set<ActorRefLike>; runOwners: Map<string, string> } {
  const actors = new Set<ActorRefLike>();
  const runOwners = new Map<string, string>();
  const system = createAgentSystem({
    inspect: (event: InspectionEvent) => {
      if (event.type === '@xstate.actor') actors.add(event.actorRef);
    },
  });
  system.events$.subscribe((entry) => {
    if (entry.event.type === 'run.started') runOwners.set(entry.runId, entry.agentId);
  });
  systems.push(system);
  return { system, actors, runOwners };
}

/** Which agent an actor works for: hosts and runs by context, tasks by input, run children by run id. */
export function ownerOf(actor: ActorRefLike, system: AgentSystem, runOwners: ReadonlyMap<string, string>): string {
  if (actor === system.actor) return 'root';
  const snapshot = actor.getSnapshot() as { context?: { agentId?: unknown }; input?: { agentId?: unknown; runId?: unknown } };
  if (typeof snapshot.context?.agentId === 'string') return snapshot.context.agentId;
  if (typeof snapshot.input?.agentId === 'string') return snapshot.input.agentId;
  if (typeof snapshot.input?.runId === 'string') return runOwners.get(snapshot.input.runId) ?? 'unknown';
  // A run's `phases` worker has no input of its own: it belongs to whoever owns its run.
  const parent = (actor as { _parent?: ActorRefLike })._parent;
  return parent === undefined ? 'unknown' : ownerOf(parent, system, runOwners);
}

/** Actors still running (`active`): neither stopped, done nor failed. */
export function activeActors(actors: Iterable<ActorRefLike>): ActorRefLike[] {
  return [...actors].filter((actor) => (actor.getSnapshot() as { status: string }).status === 'active');
}

/** The next entry of a type (optionally of one agent) on a stream. */
export function nextEvent<TType extends JournalEntry['event']['type']>(
  events$: Observable<JournalEntry>,
  type: TType,
  agentId?: string,
): Promise<JournalEntry & { event: LoopEventOf<TType> }> {
  return firstValueFrom(
    events$.pipe(
      filter((entry): entry is JournalEntry & { event: LoopEventOf<TType> } => entry.event.type === type && (agentId === undefined || entry.agentId === agentId)),
    ),
  );
}

/** The `agent.message` events of a journal's entries, as compact tuples. */
export function messagesIn(entries: readonly JournalEntry[]): { runId: string; kind: string; from: string; to: string; correlationId: string | undefined }[] {
  return entries.flatMap((entry) =>
    entry.event.type === 'agent.message'
      ? [{ runId: entry.runId, kind: entry.event.kind, from: entry.event.from, to: entry.event.to, correlationId: entry.event.correlationId }]
      : [],
  );
}
