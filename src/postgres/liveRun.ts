/**
 * A run kept alive in its worker while the calls it asked for are made. Its step commits only if no
 * one else stepped the run meanwhile (its version); otherwise the worker replays it from what is committed.
 */
import { mustMarkBegun } from './effects.ts';
import type { Engine } from './engine.ts';
import { settleEffect } from './outbox.ts';
import { goOn, release, type Running } from './running.ts';
import { claimedCalls, madeBlobs, writeStep, type Made } from './stepWrite.ts';
import { storeBlobs } from './blobs.ts';
import type { ClaimedCall } from './effects.ts';
import { transaction } from './transaction.ts';
import { defined } from '../core/defined.ts';

export interface StepOutcome {
  readonly claimed: readonly ClaimedCall[];
  readonly live?: LiveRun;
  /** Made at once, before anything is committed: their outcomes go into the next step. */
  readonly inline?: true;
}

interface Place {
  readonly workerId: string;
  readonly agentId: string;
  readonly parentId: string | null;
  readonly session: string | undefined;
  readonly version: number;
  readonly logLength: number;
}

export class LiveRun {
  #released: Promise<void> | undefined;
  /** A step that made its tool calls at once commits them with the next. */
  readonly #lines: string[] = [];
  #started: Date | undefined;
  constructor(
    private readonly engine: Engine,
    private readonly running: Running,
    private readonly place: Place,
  ) {}

  get runId(): string {
    return this.running.step.run.runId;
  }

  /**
 * Undefined when the run moved on elsewhere (it is released then). Tool calls that may run twice are
 * asked for without a commit (`inline`); model calls and tools that must not run twice need one.
 */
  async step(made: Made): Promise<StepOutcome | undefined> {
    const { engine, running, place } = this;
    this.#started ??= new Date();
    // The images its calls returned are read as the run goes on.
    const fresh = madeBlobs(made);
    engine.blobs.add(this.runId, fresh);
    running.step.settle(new Map([...made].map(([key, { outcome }]) => [key, outcome])));
    const { step } = running;
    const { lines, result } = await goOn(running, { count: 0, decisions: [] });
    this.#lines.push(...lines);
    const status = result?.status ?? step.run.status;
    const requested = result === undefined ? [...step.requested] : [];
    const calls = requested.filter(([, request]) => request.kind !== 'child');
    const marks = await Promise.all(calls.map(([, request]) => mustMarkBegun(engine, request)));
    const inline = status === 'running' && calls.length > 0 && calls.length === requested.length && calls.every(([, request], i) => request.kind === 'tool' && marks[i] === false);
    if (inline) {
      const session = defined({ session: place.session });
      return { claimed: calls.flatMap(([key, request]) => (request.kind === 'child' ? [] : [{ key, request, begun: false, ...session }])), live: this, inline: true };
    }
    const version = place.version + 1;
    const all = this.#lines.splice(0);
    const write = { actorId: this.runId, agentId: place.agentId, workerId: place.workerId, version, from: place.logLength, lines: all, calls, marks, events: 0, startedAt: this.#started, status, announce: status !== 'running', result, made };
    this.#started = undefined;
    // A sub-agent run that ends tells its parent in the same transaction.
    const tellsParent = result !== undefined && place.parentId !== null;
    const written =
      tellsParent || fresh.size > 0
        ? await transaction(engine.pool, async (client) => {
            const done = await writeStep(client, write);
            if (done.updated && fresh.size > 0) await storeBlobs(client, this.runId, [...fresh.keys()], fresh, true);
            if (done.updated && tellsParent) await settleEffect(client, place.parentId as string, `child:${this.runId}`, { ok: true, value: result });
            return done;
          })
        : await writeStep(engine.pool, write);
    if (!written.updated) {
      await this.release();
      return undefined;
    }
    const claimed = claimedCalls(calls, written.claimed, place.session);
    if (status === 'running' && requested.length === calls.length && claimed.length === calls.length && claimed.length > 0) {
      return { claimed, live: new LiveRun(engine, running, { ...place, version, logLength: place.logLength + all.length }) };
    }
    await this.release();
    return { claimed };
  }

  release(): Promise<void> {
    return (this.#released ??= release(this.engine, this.running));
  }
}
