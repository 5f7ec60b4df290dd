/** A run's checkpoint, taken as an iteration's reason phase starts, so a resume restores it instead of replaying the run. */
import type { Actor } from 'xstate';
import type { agentMachine } from '../../machines/agent.machine.ts';
import type { DoomLoopState } from '../progress/doomLoop.ts';
import type { RecoveredRun } from '../persistence/recover.ts';
import type { CheckpointData } from '../persistence/runWriter.ts';
import { defined } from '../core/defined.ts';

type AgentActor = Actor<typeof agentMachine>;
type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Stands for the conversation in the phase's packed input. */
const CONVERSATION = '$conversation';

/** `sequence`: the run's next journal sequence; `stuck`: its doom-loop detector's state. */
export function checkpointOf(actor: AgentActor, sequence: number, stuck: DoomLoopState | undefined): CheckpointData {
  const snapshot = actor.getSnapshot();
  const { messages } = snapshot.context;
  // Persisted without the conversation: XState walks every object of the context it persists.
  const persisted = actor.logic.getPersistedSnapshot({ ...snapshot, context: { ...snapshot.context, messages: [] } }) as Json;
  const { messages: _none, ...context } = persisted.context as Json & { readonly iteration: number };
  // The phase's input holds the context's conversation itself (not a copy): written once.
  const children = mapPhaseInput(persisted.children, (input) => {
    if (input.messages !== messages) return input;
    const { messages: _same, ...rest } = input;
    return { ...rest, [CONVERSATION]: true };
  });
  return {
    iteration: context.iteration,
    sequence,
    snapshot: { ...persisted, context, children },
    messages,
    ...defined({ stuck }),
  };
}

/** The machine snapshot a resumed run restores: its last checkpoint's, if it has one. */
export function restoredSnapshot(recovered: RecoveredRun): Json | undefined {
  const checkpoint = recovered.checkpoint;
  if (checkpoint === undefined) return undefined;
  const { snapshot, messages } = checkpoint;
  const children = mapPhaseInput(snapshot.children, (input) => {
    if (input[CONVERSATION] !== true) return input;
    const { [CONVERSATION]: _marker, ...rest } = input;
    return { ...rest, messages };
  });
  return { ...snapshot, context: { ...(isObject(snapshot.context) ? snapshot.context : {}), messages }, children };
}

/** XState's restore walks the whole context, so the conversation is put back after restoring without it. */
export function restoreActor(snapshot: Json, create: (snapshot: Json) => AgentActor): AgentActor {
  const context = snapshot.context;
  if (!isObject(context) || !Array.isArray(context.messages)) return create(snapshot);
  const bare: Json = { ...context, messages: [] };
  const actor = create({ ...snapshot, context: bare });
  if ((actor.getSnapshot().context as unknown) !== bare) return create(snapshot);
  bare.messages = context.messages;
  return actor;
}

/** A restored snapshot carries no timers: arm the wall-clock limit again under the id its `after` transition cancels. */
export function rearmRunTimeout(actor: AgentActor): void {
  const snapshot = actor.getSnapshot();
  if (snapshot.status !== 'active') return;
  const running = actor.logic.getStateNodeById('agent.running');
  for (const { delay, eventType } of running.after) {
    if (delay !== 'runTimeout') continue;
    actor.system.scheduler.schedule(actor, actor, { type: eventType }, snapshot.context.limits.timeoutMs, eventType);
  }
}

function mapPhaseInput(children: unknown, map: (input: Json) => Json): unknown {
  if (!isObject(children) || !isObject(children.phases)) return children;
  const worker = children.phases;
  const snapshot = worker.snapshot;
  if (!isObject(snapshot) || !isObject(snapshot.job) || !isObject(snapshot.job.input)) return children;
  const job = { ...snapshot.job, input: map(snapshot.job.input) };
  return { ...children, phases: { ...worker, snapshot: { ...snapshot, job } } };
}
