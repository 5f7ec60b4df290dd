import { setImmediate as nextTurn } from 'node:timers/promises';
import { ActorloopError } from '../core/errors.ts';
import type { LoopResult } from '../core/run.ts';
import type { AgentRun } from '../agent/types.ts';
import type { StepContext } from './durable.ts';
import type { Engine } from './engine.ts';

export interface HumanDecision {
  readonly approve: boolean;
  readonly toolCallIds?: readonly string[];
  readonly reason?: string;
}

export interface Events {
  readonly count: number;
  readonly decisions: HumanDecision[];
  readonly cancel?: string;
}

/** Turns of the event loop without progress after which a run that waits on calls is at rest. */
const REST_TURNS = 3;

export interface Running {
  readonly handle: AgentRun;
  readonly step: StepContext;
  ended: boolean;
}

export function runningHere(handle: AgentRun, step: StepContext): Running {
  const run: Running = { handle, step, ended: false };
  void handle.settled.then(
    () => (run.ended = true),
    () => (run.ended = true),
  );
  return run;
}

export interface Went {
  readonly lines: readonly string[];
  readonly result?: { readonly status: string };
}

export async function goOn(running: Running, events: Events): Promise<Went> {
  const { handle, step } = running;
  const ending = await advanceRun(handle, step, events);
  if (ending.kind === 'ended') return { lines: [...step.run.added], result: storedResult(ending.result) };
  const inFlight = new Set([...step.requested.values()].flatMap((request) => (request.kind === 'tool' ? [request.idempotencyKey] : [])));
  return { lines: step.run.take(inFlight, handle.phase() === 'awaitingHuman') };
}

/** What it writes from now on is not its history: a later step replays it. */
export async function release(engine: Engine, running: Running): Promise<void> {
  running.step.run.seal();
  if (!running.ended) running.handle.cancel('the step ended: the run waits for its next event');
  await running.handle.settled;
  engine.store.end(running.step.run.runId);
  engine.blobs.drop(running.step.run.runId);
}

type Ending = { readonly kind: 'ended'; readonly result: LoopResult } | { readonly kind: 'rest' };

/**
 * Until it ends, waits for a human, or nothing it writes or asks for changes for a few turns. A run at
 * work with nothing asked for (a slow hook, a gate that calls a service) is waited on, not polled.
 */
async function advanceRun(handle: AgentRun, step: StepContext, events: Events): Promise<Ending> {
  const { run } = step;
  let ended: LoopResult | undefined;
  const undecided = [...events.decisions];
  void handle.settled.then((result) => {
    ended = result;
    run.changed();
  });
  // A phase may change with the machine's snapshot before anything is journaled.
  const changed = (): void => run.changed();
  const subscription = handle.actor.subscribe({ next: changed, error: changed, complete: changed });
  let seen = -1;
  let still = 0;
  let working = false;
  try {
    for (;;) {
      await (working ? run.nextChange() : nextTurn());
      working = false;
      if (ended !== undefined) return { kind: 'ended', result: ended };
      const decision = handle.phase() === 'awaitingHuman' ? undecided.shift() : undefined;
      if (decision !== undefined) {
        // Decisions answer, in order, the waits the replay reaches that it has no answer for; a wait left over rests.
        if (decision.approve) handle.approve(decision.toolCallIds);
        else handle.reject(decision.reason, decision.toolCallIds);
        continue;
      }
      const progress = step.progress;
      if (progress !== seen) {
        seen = progress;
        still = 0;
        continue;
      }
      if (handle.phase() !== 'awaitingHuman') {
        // Nothing asked for: the run is at work, and its next line, entry, request or end says so.
        if (step.requested.size === 0) {
          working = true;
          continue;
        }
        if (++still < REST_TURNS) continue;
      }
      // At rest: a cancellation ends the run here, with what it did so far.
      if (events.cancel === undefined) return { kind: 'rest' };
      handle.cancel(events.cancel);
      return { kind: 'ended', result: await handle.settled };
    }
  } finally {
    subscription.unsubscribe();
  }
}

function storedResult(result: LoopResult): Omit<LoopResult, 'cause'> {
  const { cause, ...rest } = result;
  if (rest.error !== undefined || !(cause instanceof ActorloopError)) return rest;
  return { ...rest, error: cause.toJSON() };
}

