/**
 * A run's checkpoints: what the agent machine and the run need to go on from an iteration
 * boundary, so a resume restores that instead of replaying the run from its start. Taken as the
 * machine enters an iteration's reason phase (the phase that starts the iteration, its input the
 * conversation): the machine's persisted snapshot, its conversation written once though the
 * context and the reason phase's input both hold it, and the run's doom-loop detector. Restored,
 * the `phases` worker runs that reason phase again, answered from the log when it was recorded.
 */
import type { Actor } from 'xstate';
import type { agentMachine } from '../../machines/agent.machine.ts';
import type { DoomLoopState } from '../progress/doomLoop.ts';
import type { RecoveredRun } from '../persistence/recover.ts';
import type { CheckpointData } from '../persistence/runWriter.ts';

type AgentActor = Actor<typeof agentMachine>;
type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Stands for the conversation in the phase's packed input. */
const CONVERSATION = '$conversation';

/**
 * The checkpoint of `actor`, in its reason phase: `sequence` is the run's next journal sequence,
 * `stuck` its detector's state.
 */
export function checkpointOf(actor: AgentActor, sequence: number, stuck: DoomLoopState | undefined): CheckpointData {
  const snapshot = actor.getSnapshot();
  const { messages } = snapshot.context;
  // Persisted without the conversation: XState walks every object of the context it persists,
  // which for a long conversation costs far more than the rest of the checkpoint.
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
    ...(stuck === undefined ? {} : { stuck }),
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

/**
 * The actor of a run restored from a checkpoint's snapshot. XState's restore walks every object
 * of the context for actor references, which a conversation never holds, at a cost that grows with
 * the conversation: the snapshot is restored with an empty conversation, which is then put back into the
 * restored context (the object passed in, made here) before the actor starts. Should XState ever
 * restore a copy of the context instead, the snapshot is restored as it is.
 */
export function restoreActor(snapshot: Json, create: (snapshot: Json) => AgentActor): AgentActor {
  const context = snapshot.context;
  if (!isObject(context) || !Array.isArray(context.messages)) return create(snapshot);
  const bare: Json = { ...context, messages: [] };
  const actor = create({ ...snapshot, context: bare });
  if ((actor.getSnapshot().context as unknown) !== bare) return create(snapshot);
  bare.messages = context.messages;
  return actor;
}

/**
 * A restored snapshot carries no timers: arm the run's wall-clock limit again, from now, as a
 * run replayed from its start arms it. Scheduled under the id the `after` transition's own
 * exit cancels, so it ends with the `running` state like the original. Call after `start`.
 */
export function rearmRunTimeout(actor: AgentActor): void {
  const snapshot = actor.getSnapshot();
  if (snapshot.status !== 'active') return;
  const running = actor.logic.getStateNodeById('agent.running');
  for (const { delay, eventType } of running.after) {
    if (delay !== 'runTimeout') continue;
    actor.system.scheduler.schedule(actor, actor, { type: eventType }, snapshot.context.limits.timeoutMs, eventType);
  }
}

/** `children` with the `phases` worker's job input mapped (the worker keeps the phase it runs as its job). */
function mapPhaseInput(children: unknown, map: (input: Json) => Json): unknown {
  if (!isObject(children) || !isObject(children.phases)) return children;
  const worker = children.phases;
  const snapshot = worker.snapshot;
  if (!isObject(snapshot) || !isObject(snapshot.job) || !isObject(snapshot.job.input)) return children;
  const job = { ...snapshot.job, input: map(snapshot.job.input) };
  return { ...children, phases: { ...worker, snapshot: { ...snapshot, job } } };
}
