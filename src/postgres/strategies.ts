/**
 * A step replays the strategy from its start with its branches' and model calls' outcomes, so its
 * `init`, `step` and `aggregate` must decide the same way given the same thoughts.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { JournalEntry } from '../core/loopEvent.ts';
import { startStrategy } from '../strategies/runStrategy.ts';
import { STRATEGY_DEFAULTS } from '../strategies/defaults.ts';
import type { StrategyResult } from '../strategies/result.ts';
import { LOG_VERSION } from '../persistence/records.ts';
import { durableProvider, inFrame, type StepContext } from './durable.ts';
import type { BoundStrategy } from './engine.ts';
import { defined } from '../core/defined.ts';

export interface StrategyAdvance {
  readonly lines: readonly string[];
  readonly result?: StrategyResult;
}

const REST_TURNS = 3;

export function strategyBudget(bound: BoundStrategy): number {
  return bound.definition.timeoutMs ?? STRATEGY_DEFAULTS.timeoutMs;
}

/** When a strategy run's budget is spent, on the database's clock (`createdAt` is its row's): a wake then ends it even while its branches run on. */
export function strategyDeadline(bound: BoundStrategy, createdAt: number): number {
  return createdAt + strategyBudget(bound);
}

/** `deadline`: when its budget is spent, on this worker's clock. */
export async function advanceStrategy(bound: BoundStrategy, runId: string, task: string, step: StepContext, deadline: number, cancel?: string): Promise<StrategyAdvance> {
  const { definition } = bound;
  const logged = step.run.records.filter((record) => record.kind === 'event').length;
  const entries: JournalEntry[] = [];
  const run = inFrame(step, runId, bound.agentId, () =>
    startStrategy({
      strategy: definition.strategy,
      ...defined({ options: definition.options }),
      task,
      subAgent: definition.subAgent,
      model: durableProvider(bound.provider),
      ...defined({
        modelName: definition.modelName,
        concurrency: definition.concurrency,
        maxRounds: definition.maxRounds,
        timeoutMs: definition.timeoutMs,
      }),
      runId,
      agentId: bound.agentId,
    }),
  );
  let sealed = false;
  // Only the runner's own entries: its branches journal their own runs.
  const subscription = run.events$.subscribe((entry) => {
    if (sealed || entry.runId !== runId) return;
    entries.push(entry);
    step.run.changed();
  });
  let ended: StrategyResult | undefined;
  void run.settled.then((result) => {
    ended = result;
    step.run.changed();
  });
  let seen = -1;
  let still = 0;
  let working = false;
  for (;;) {
    // With nothing asked for it is at work: its next entry, request or end says so.
    await (working ? step.run.nextChange() : nextTurn());
    working = false;
    if (ended !== undefined) break;
    const progress = entries.length + step.requested.size;
    if (progress !== seen) {
      seen = progress;
      still = 0;
    } else if (step.requested.size === 0) working = true;
    else if (++still >= REST_TURNS) {
      // At rest the replay has given back what earlier steps logged: what the end adds follows it.
      if (cancel !== undefined) run.cancel(cancel);
      else if (Date.now() >= deadline) run.actor.send({ type: 'strategy.expire' });
      else break;
      await run.settled;
    }
  }
  sealed = true;
  const result = ended;
  if (result === undefined) {
    run.cancel('the step ended: the run waits for its branches');
    await run.settled;
  }
  subscription.unsubscribe();
  const lines = entries.slice(logged).map((entry) => JSON.stringify({ v: LOG_VERSION, kind: 'event', entry }));
  if (result === undefined) return { lines };
  const { events: _events, cause: _cause, ...rest } = result;
  return { lines, result: { ...rest, events: [] } };
}
