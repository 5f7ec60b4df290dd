import { concat, defer, from } from 'rxjs';
import type { Actor } from 'xstate';
import type { agentMachine } from '../../machines/agent.machine.ts';
import type { AgentContext, AgentEvent, AgentMachineInput, AgentOutput } from '../../machines/agent.types.ts';
import type { PhaseReply } from '../../machines/phaseRunner.ts';
import type { Message } from '../core/messages.ts';
import type { LoopResult } from '../core/run.ts';
import type { EventBus } from '../events/eventBus.ts';
import type { MemoryJournal } from '../events/memoryJournal.ts';
import type { RecoveredRun } from '../persistence/recover.ts';
import type { RunOwner } from '../persistence/records.ts';
import type { Redactor } from '../security/redactor.ts';
import type { StuckGuard } from '../progress/stuckGuard.ts';
import { checkpointOf } from './checkpoint.ts';
import { errorForResult } from './errors.ts';
import { bindRun, RunContext } from '../run/context.ts';
import { failedResult, isResumableFailure } from './result.ts';
import type { RunPersistence } from '../run/persistence.ts';
import { endTurn } from './runtime.ts';
import type { HookRunner } from './hooks.ts';
import type { SessionMemory } from '../core/sessionMemory.ts';
import type { TerminationReason } from '../core/loopEvent.ts';
import type { AgentRun } from './types.ts';
import { defined } from '../core/defined.ts';

type AgentActor = Actor<typeof agentMachine>;

export interface RunHost {
  readonly agentId: string;
  readonly redactor: Redactor;
  readonly bus: EventBus;
  readonly journal: MemoryJournal;
  /** The live runs, by id. */
  readonly runs: Map<string, RunContext>;
  readonly knowledge?: { remember(result: LoopResult, task?: string): Promise<unknown> };
  readonly hooks?: HookRunner;
  readonly experiences?: { settle(result: LoopResult, shown: readonly string[]): Promise<void> };
  sessionOf?(runId: string): SessionMemory | undefined;
  readonly stuckGuard?: Pick<StuckGuard, 'save' | 'restore'>;
}

/** Hook a run's actor, not yet started (a root run's own or one a parent spawned), into its agent's journal, bus, store and result. */
export function attachRun(
host: RunHost,
actor: AgentActor,
input: AgentMachineInput,
persistence: RunPersistence | undefined,
recovered?: RecoveredRun,
tookOver?: RunOwner,
): AgentRun {
  const { agentId, redactor, bus, journal, runs, knowledge, hooks, experiences } = host;
  const { runId } = input;
  const startedAt = Date.now();
  const session = host.sessionOf?.(runId);
  const run = new RunContext({
    runId,
    agentId,
    redact: redactor.event,
    publish: (entry) => bus.publish(entry),
    ...defined({ persistence, recovered, tookOver }),
    ...(input.mode === 'call' ? { toolsOff: true } : {}),
    ...defined({ session }),
  });
  run.resumed();
  bindRun(actor, run);
  runs.set(runId, run);
  const stuck = recovered?.checkpoint?.stuck;
  if (stuck !== undefined) host.stuckGuard?.restore(run, stuck);
  const send = (event: AgentEvent | PhaseReply): void => actor.send(event);
  run.toMachine = send;
  actor.on('*', (event) => run.observe(event, send));
  persistence?.onLost((reason) => actor.send({ type: 'agent.cancel', reason: `another process took the run over (${reason})` }));

  let resolveSettled!: (result: LoopResult) => void;
  const settled = new Promise<LoopResult>((resolve) => (resolveSettled = resolve));
  let finished = false;
  const finish = (output: AgentOutput | undefined, error?: unknown) => {
    if (finished) return;
    finished = true;
    runs.delete(runId);
    run.dismissQuestion();
    const snapshot = actor.getSnapshot();
    // Stopped by its parent actor (XState stops children with their parent): the run is cancelled.
    const ended = output ?? (snapshot.status === 'stopped' ? stoppedOutput(snapshot.context) : undefined);
    if (output === undefined && ended !== undefined) {
      run.publish({ type: 'run.terminated', reason: 'cancelled', iterations: ended.iterations, usage: { ...ended.usage } });
    }
    const resumable = persistence?.journal !== undefined && isResumableFailure(ended?.reason, ended?.error);
    const result = toResult(ended, error, { runId, agentId, startedAt, messages: snapshot.context.messages, resumable });
    const settle = () => resolveSettled(result);
    // All never reject; the next run must see this run's remembered answer and final state.
    void Promise.all([
      ended === undefined ? undefined : lastTurnEnd(hooks, run, ended),
      knowledge?.remember(result, input.task),
      experiences?.settle(result, snapshot.context.experiences ?? []),
      persistence?.finish(result.reason, { ...(resumable ? { resumable } : {}), ...defined({ error: result.error }) }),
    ]).then(settle, settle);
  };
  actor.subscribe({
    next: (snapshot) => {
      if (persistence === undefined || snapshot.status !== 'active') return;
      run.atPhase(phaseOf(snapshot.value), snapshot.context.iteration, () => checkpointOf(actor, run.sequence, host.stuckGuard?.save(run)));
    },
    complete: () => finish(actor.getSnapshot().output),
    // The root error observer: an actor error must never be rethrown into the host.
    error: (error: unknown) => finish(undefined, error),
  });
  const result = settled.then((r) => (r.status === 'done' ? r : Promise.reject(errorForResult(r))));
  // `result` is optional to await; an unobserved rejection must not crash the host.
  result.catch(() => undefined);

  return {
    runId,
    actor,
    // Replays what the run emitted before the subscription (start() emits synchronously), then goes live.
    events$: defer(() => concat(from(journal.entries(runId)), journal.follow(runId))),
    settled,
    result,
    cancel: (reason?: string) => {
      run.dismissQuestion();
      actor.send(reason === undefined ? { type: 'agent.cancel' } : { type: 'agent.cancel', reason });
    },
    // A server's question waiting for the human takes the decision; otherwise it is about calls.
    approve: (toolCallIds, options) => {
      if (run.asking) run.answer('approve', options?.answer);
      else actor.send(toolCallIds === undefined ? { type: 'agent.approve' } : { type: 'agent.approve', toolCallIds });
    },
    reject: (reason, toolCallIds) =>
      run.asking
        ? run.answer('reject', undefined, reason === undefined ? undefined : redactor.text(reason))
        : actor.send({
        type: 'agent.reject',
        // It goes back to the model (and the log) as the calls' outcome.
        ...(reason === undefined ? {} : { reason: redactor.text(reason) }),
        ...defined({ toolCallIds }),
      }),
    phase: () => (run.asking ? 'awaitingHuman' : phaseOf(actor.getSnapshot().value)),
  };
}

const AFTER_A_TURN: ReadonlySet<TerminationReason> = new Set(['max_iterations', 'max_tokens', 'stuck', 'model_behavior']);

/** The `onTurnEnd` of a run's last turn, ended by a limit after it: a failing hook is journalled and changes nothing. */
function lastTurnEnd(hooks: HookRunner | undefined, scope: RunContext, ended: AgentOutput): Promise<void> | undefined {
  if (hooks?.onTurnEnd === undefined || !AFTER_A_TURN.has(ended.reason)) return undefined;
  const at = { runId: ended.runId, agentId: ended.agentId, iteration: ended.iterations, signal: new AbortController().signal, emit: scope.emit };
  return endTurn(hooks, scope, at, ended.iterations, ended.messages).catch(() => undefined);
}

/** The output of a run its parent stopped: cancelled, with what it had done by then. */
function stoppedOutput(context: AgentContext): AgentOutput {
  return {
    runId: context.runId,
    agentId: context.agentId,
    reason: 'cancelled',
    text: null,
    iterations: context.iteration,
    usage: context.usage,
    costUsd: context.costUsd,
    messages: context.messages,
  };
}

function phaseOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object' && 'running' in value) return String((value as { running: unknown }).running);
  return 'unknown';
}

function toResult(
  output: AgentOutput | undefined,
  error: unknown,
  meta: { runId: string; agentId: string; startedAt: number; messages: readonly Message[]; resumable: boolean },
): LoopResult {
  const durationMs = Date.now() - meta.startedAt;
  if (output === undefined) {
    const message = error instanceof Error ? error.message : String(error);
    const data = { name: error instanceof Error ? error.name : 'Error', code: 'actor_error', message };
    return failedResult(meta.runId, meta.agentId, data, { cause: error, messages: meta.messages, durationMs });
  }
  const status = output.reason === 'final_answer' ? 'done' : output.reason === 'cancelled' ? 'cancelled' : 'failed';
  return {
    runId: output.runId,
    agentId: output.agentId,
    status,
    reason: output.reason,
    text: output.text,
    iterations: output.iterations,
    usage: output.usage,
    costUsd: output.costUsd,
    messages: output.messages,
    durationMs,
    ...defined({ output: output.output, error: output.errorData, cause: output.error }),
    ...(meta.resumable ? { resumable: true } : {}),
  };
}
