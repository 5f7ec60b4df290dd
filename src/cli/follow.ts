// Shared by `run`, `resume`, `approve` and `reject`, so they print alike.
import type { AgentRun } from '../agent/types.ts';
import type { LoopResult } from '../core/run.ts';
import { createReporter, type ReporterMode } from './liveView.ts';
import { printable } from '../tools/text.ts';
import { formatCost } from './format.ts';

export type FollowOutcome = { readonly kind: 'settled'; readonly result: LoopResult } | { readonly kind: 'waiting' };

export interface AgentCommandResult {
  readonly exitCode: number;
  /** Stop the agent and the inspector, unless the run is parked for a human (stopping would cancel it). */
  readonly cleanup: () => Promise<void>;
}

export function modeFor(json: boolean): ReporterMode {
  return json ? 'json' : process.stdout.isTTY === true ? 'tty' : 'plain';
}

export interface FollowReport {
  readonly outcome: FollowOutcome;
  readonly exitCode: number;
}

export interface FollowOptions {
  readonly mode: ReporterMode;
  /** Run once the run first waits for a human (approve or reject); without it the command stops there. */
  readonly decide?: (run: AgentRun) => void | 'again';
}

/** `decide` applies at the run's first wait for a human, and at the next ones while it returns `'again'`. */
export async function followRun(run: AgentRun, options: FollowOptions): Promise<FollowReport> {
  const reporter = createReporter(options.mode, process.stdout);
  const subscription = run.events$.subscribe((entry) => reporter.entry(entry));
  let decide = options.decide;
  let outcome: FollowOutcome;
  for (;;) {
    outcome = await nextStop(run);
    if (outcome.kind === 'settled' || decide === undefined) break;
    if (decide(run) !== 'again') decide = undefined;
    await phaseLeft(run, 'awaitingHuman');
  }
  subscription.unsubscribe();
  reporter.close();
  return { outcome, exitCode: printOutcome(run.runId, outcome, options.mode === 'json') };
}

function printOutcome(runId: string, outcome: FollowOutcome, json: boolean): number {
  if (outcome.kind === 'waiting') {
    // stdout stays JSON-only under --json; the hint is for a person.
    const hint = `run ${runId} is waiting for a human: actorloop approve ${runId}   or   actorloop reject ${runId} --reason "…"`;
    if (json) process.stderr.write(`${hint}\n`);
    else process.stdout.write(`\n${hint}\n`);
    return 0;
  }
  const { result } = outcome;
  if (result.status !== 'done') {
    // The message may quote a server's stderr or a provider's words: printed inert, like event lines.
    const why = result.error === undefined ? '' : `: ${printable(result.error.message)}`;
    const resume = result.resumable === true ? ` Continue it with: actorloop resume ${runId}` : '';
    process.stderr.write(`run ${runId} ${result.status} (${result.reason})${why}${resume}\n`);
    return 1;
  }
  if (!json) {
    process.stdout.write(`\nanswer: ${printable(result.text ?? '')}\n`);
    process.stdout.write(
      `run ${runId}: ${result.iterations} iterations, ${result.usage.totalTokens} tokens, ${formatCost(result.costUsd)}, ${result.durationMs} ms\n`,
    );
  }
  return 0;
}

/** How often the phase is looked at besides the actor's changes: a durable run's phase changes in the database, not in an actor here. */
const PHASE_CHECK_MS = 250;

function nextStop(run: AgentRun): Promise<FollowOutcome> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (outcome: FollowOutcome): void => {
      if (done) return;
      done = true;
      clearInterval(checking);
      queueMicrotask(() => subscription.unsubscribe());
      resolve(outcome);
    };
    const check = (): void => {
      if (run.phase() === 'awaitingHuman') finish({ kind: 'waiting' });
    };
    const checking = setInterval(check, PHASE_CHECK_MS);
    const subscription = run.actor.subscribe({ next: check, error: () => undefined });
    void run.settled.then((result) => finish({ kind: 'settled', result }));
    check();
  });
}

function phaseLeft(run: AgentRun, phase: string): Promise<void> {
  return new Promise((resolve) => {
    if (run.phase() !== phase) return resolve();
    const subscription = run.actor.subscribe({
      next: () => {
        if (run.phase() !== phase) {
          queueMicrotask(() => subscription.unsubscribe());
          resolve();
        }
      },
      error: () => resolve(),
      complete: () => resolve(),
    });
  });
}
