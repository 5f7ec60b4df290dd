/**
 * Between its steps a run lives on in this process, so the next step goes on from memory while this
 * is the run's only drive here; a wake that arrives meanwhile makes steps rebuild it from what is committed.
 */
import { makeCall, type CallResult } from './effects.ts';
import type { Engine } from './engine.ts';
import type { LiveRun, StepOutcome } from './liveRun.ts';
import { SCHEMA } from './migrations.ts';
import { applyStep, failRun } from './step.ts';
import type pg from 'pg';
import { wake } from './outbox.ts';
import { isConnectionError, transaction, whileReconnecting } from './transaction.ts';
import { madeBlobs, storedRequest, type Made, type MadeCall } from './stepWrite.ts';
import { storeBlobs } from './blobs.ts';
import { DurableRunError } from './errors.ts';
import { jsonbText } from './jsonb.ts';

interface Held {
  /** Wakes that came while one was going on. */
  drives: number;
  /** One at a time. */
  turn: Promise<void>;
  live?: { readonly run: LiveRun; readonly owner: object };
  /** Outcomes not recorded yet. */
  readonly inHand: Set<string>;
}

export class Runs {
  readonly #held = new Map<string, Held>();

  enter(actorId: string): Held {
    const held = this.#held.get(actorId) ?? { drives: 0, turn: Promise.resolve(), inHand: new Set<string>() };
    held.drives++;
    this.#held.set(actorId, held);
    return held;
  }

  leave(actorId: string, held: Held): void {
    if (--held.drives === 0 && this.#held.get(actorId) === held) this.#held.delete(actorId);
  }
}

export async function drive(engine: Engine, workerId: string, runs: Runs, actorId: string, signal: AbortSignal): Promise<void> {
  const held = runs.enter(actorId);
  const me = {};
  /** They go into the next step that commits. */
  let made: Made = new Map();
  try {
    for (;;) {
      let outcome: StepOutcome;
      try {
        outcome = await inTurn(held, () => step(engine, workerId, held, me, actorId, made, signal));
      } catch (error) {
        // Retrying cannot mend a corrupt row, bring bytes back or change the caller's definition: the run fails, saying why.
        if (!(error instanceof DurableRunError && (error.code === 'corrupt_row' || error.code === 'missing_blob' || error.code === 'definition_mismatch'))) throw error;
        await failRun(engine, actorId, error);
        return;
      }
      if (outcome.inline !== true) {
        for (const key of made.keys()) held.inHand.delete(key);
        made = new Map();
      }
      const { claimed } = outcome;
      if (claimed.length === 0 || signal.aborted) return;
      for (const call of claimed) held.inHand.add(call.key);
      const outcomes = await Promise.all(claimed.map((call) => makeCall(engine, call, signal, actorId)));
      // Calls the worker's stop interrupted say nothing of what they would have done: they are made again.
      if (signal.aborted) return;
      made = new Map([...made, ...claimed.map((call, index): [string, MadeCall] => [call.key, { request: call.request, ...(outcomes[index] as CallResult) }])]);
    }
  } finally {
    // Outcomes no step recorded (a worker stopping between a model call and its tool calls) are kept for the next.
    if (made.size > 0) await keepOutcomes(engine, actorId, made).catch(() => undefined);
    for (const key of made.keys()) held.inHand.delete(key);
    if (held.live?.owner === me) {
      const { run } = held.live;
      delete held.live;
      await run.release();
    }
    runs.leave(actorId, held);
  }
}

function inTurn<T>(held: Held, work: () => Promise<T>): Promise<T> {
  const result = held.turn.then(work);
  held.turn = result.then(
    () => undefined,
    () => undefined,
  );
  return result;
}

/** On from the run alive here when this drive owns it and is alone, from what is committed otherwise. */
async function step(engine: Engine, workerId: string, held: Held, me: object, actorId: string, made: Made, signal: AbortSignal): Promise<StepOutcome> {
  const live = held.live;
  let outcome: StepOutcome | undefined;
  if (live !== undefined) {
    delete held.live;
    if (live.owner === me && held.drives === 1) {
      try {
        outcome = await live.run.step(made);
      } catch (error) {
        await live.run.release();
        if (!isConnectionError(error)) throw error;
        // Whether the step committed is unknown: calls it may have claimed go back, to be claimed again.
        await whileReconnecting(() => releaseClaims(engine, workerId, actorId, held.inHand), { signal });
      }
    } else await live.run.release();
  }
  if (outcome === undefined) {
    let attempt = 0;
    outcome = await whileReconnecting(async () => {
      if (attempt++ > 0) await releaseClaims(engine, workerId, actorId, held.inHand);
      return applyStep(engine, workerId, actorId, made);
    }, { signal });
  }
  if (outcome.live === undefined) return outcome;
  // Kept alive only while this is the run's one drive here; otherwise the next step rebuilds it.
  if (held.drives === 1 && !signal.aborted) held.live = { run: outcome.live, owner: me };
  else await outcome.live.release();
  return outcome;
}

/** The step that rebuilds the run takes them. */
async function keepOutcomes(engine: Engine, actorId: string, made: Made): Promise<void> {
  await transaction(engine.pool, async (client) => {
    await recordOutcomes(client, actorId, made);
    const fresh = madeBlobs(made);
    if (fresh.size > 0) await storeBlobs(client, actorId, [...fresh.keys()], fresh, true);
    await wake(client, [actorId]);
  });
}

async function recordOutcomes(client: pg.PoolClient, actorId: string, made: Made): Promise<void> {
  await client.query(
    `INSERT INTO ${SCHEMA}.effects AS effects (actor_id, key, kind, status, request, outcome, finished_at, since)
     SELECT $1, key, request->>'kind', 'done', request, outcome, now(), (SELECT log_length FROM ${SCHEMA}.actors WHERE id = $1)
     FROM unnest($2::text[], $3::jsonb[], $4::jsonb[]) AS t(key, outcome, request)
     ON CONFLICT (actor_id, key) DO UPDATE SET status = 'done', outcome = EXCLUDED.outcome, finished_at = now(), claimed_by = NULL WHERE effects.status <> 'done'`,
    [actorId, [...made.keys()], [...made.values()].map(({ outcome }) => jsonbText(outcome)), [...made.values()].map(({ request }) => jsonbText(storedRequest(request)))],
  );
}

/** A step whose commit went unanswered may have claimed them: none has begun, so none is marked so. */
async function releaseClaims(engine: Engine, workerId: string, actorId: string, inHand: ReadonlySet<string>): Promise<void> {
  await engine.pool.query(
    `UPDATE ${SCHEMA}.effects SET claimed_by = NULL, status = CASE WHEN status = 'running' THEN 'pending' ELSE status END
     WHERE actor_id = $1 AND claimed_by = $2 AND status <> 'done' AND NOT (key = ANY($3::text[]))`,
    [actorId, workerId, [...inHand]],
  );
}
