/**
 * A run kept alive in the worker that steps it, while the worker makes the calls it asked for:
 * its next step answers those calls in memory and lets it go on, instead of rebuilding it from
 * its log. The step commits only if no one else stepped the run meanwhile (its version); anything
 * else — another worker's step, an event in its mailbox, a lost connection — sends the worker
 * back to a step that replays the run from what is committed.
 */
import type { EffectOutcome } from './durable.ts';
import { mustMarkBegun } from './effects.ts';
import type { Engine } from './engine.ts';
import { settleEffect } from './outbox.ts';
import { goOn, release, type Running } from './running.ts';
import { claimedCalls, writeStep } from './stepWrite.ts';
import type { ClaimedCall } from './effects.ts';
import { transaction } from './transaction.ts';

/** What a step leaves for its worker: the calls it claimed, to make now, and the run itself when it lives on here. */
export interface StepOutcome {
  readonly claimed: readonly ClaimedCall[];
  readonly live?: LiveRun;
}

interface Place {
  readonly workerId: string;
  readonly agentId: string;
  readonly parentId: string | null;
  /** The version the run's last step wrote. */
  readonly version: number;
  readonly logLength: number;
}

export class LiveRun {
  #released: Promise<void> | undefined;
  constructor(
    private readonly engine: Engine,
    private readonly running: Running,
    private readonly place: Place,
  ) {}

  get runId(): string {
    return this.running.step.run.runId;
  }

  /**
   * The run's next step with the outcomes of its calls: the step, or undefined when the run moved
   * on elsewhere (the run is released then, and the worker steps it from what is committed).
   */
  async step(made: ReadonlyMap<string, EffectOutcome>): Promise<StepOutcome | undefined> {
    const { engine, running, place } = this;
    const started = new Date();
    running.step.settle(made);
    const { step } = running;
    const { lines, result } = await goOn(running, { count: 0, decisions: [] });
    const status = result?.status ?? step.run.status;
    const requested = result === undefined ? [...step.requested] : [];
    const calls = requested.filter(([, request]) => request.kind !== 'child');
    const marks = await Promise.all(calls.map(([, request]) => mustMarkBegun(engine, request)));
    const version = place.version + 1;
    const write = { actorId: this.runId, agentId: place.agentId, workerId: place.workerId, version, from: place.logLength, lines, calls, marks, events: 0, startedAt: started, status, result, made };
    // A sub-agent run that ends tells its parent in the same transaction; otherwise the step is one statement.
    const written =
      result !== undefined && place.parentId !== null
        ? await transaction(engine.pool, async (client) => {
            const done = await writeStep(client, write);
            if (done.updated) await settleEffect(client, place.parentId as string, `child:${this.runId}`, { ok: true, value: result });
            return done;
          })
        : await writeStep(engine.pool, write);
    if (!written.updated) {
      await this.release();
      return undefined;
    }
    const claimed = claimedCalls(calls, written.claimed);
    if (status === 'running' && requested.length === calls.length && claimed.length === calls.length && claimed.length > 0) {
      return { claimed, live: new LiveRun(engine, running, { ...place, version, logLength: place.logLength + lines.length }) };
    }
    await this.release();
    return { claimed };
  }

  /** Stop the run here (once). */
  release(): Promise<void> {
    return (this.#released ??= release(this.engine, this.running));
  }
}
