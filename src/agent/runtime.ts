/**
 * The phases a run's machine is provided with, for one agent: the model call, the gate, the tool
 * calls and pre-hydration, each redacting secrets from what it produces before the machine sees
 * it, recording its reply when the run is persisted, and answering from the record instead when
 * a resumed run replays it.
 */
import type { ActInput, ActOutput, GateInput, GateOutput, HydrateInput, HydrateOutput, ReasonInput, ReasonOutput } from '../core/run.ts';
import type { LoopEvent } from '../core/loopEvent.ts';
import type { ToolSpec } from '../core/provider.ts';
import type { CallJournal, Executor } from '../executor/executor.ts';
import type { PolicyGate } from '../policy/types.ts';
import type { TaintPolicy } from '../policy/taint.ts';
import type { StuckGuard } from '../progress/stuckGuard.ts';
import type { Redactor } from '../security/redactor.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { planCalls } from './gatePhase.ts';
import type { Hydrator } from '../core/hooks.ts';
import { reason, type ReasonPhaseDeps, type ReasonPhaseScope } from './reasonPhase.ts';
import type { Replay } from './replay.ts';
import type { RunPersistence } from './runPersistence.ts';
import { phase, type PhaseImplementations } from '../../machines/phaseRunner.ts';

/** What the phases of one run reach: its event stream and, when it is persisted, its records. */
export interface RunScope {
  emit(event: LoopEvent): void;
  /** Built once per run, not per model call. */
  readonly reasonScope: ReasonPhaseScope;
  readonly journal?: CallJournal;
  readonly persistence?: RunPersistence;
  /** Set while a resumed run re-takes its recorded steps. */
  readonly replay?: Replay;
}

export interface AgentPhasesOptions {
  readonly agentId: string;
  readonly reasonDeps: ReasonPhaseDeps;
  readonly hydrator?: Hydrator;
  /** Provide a hydrate phase even without a hydrator, so that persisted runs record its (empty) reply. */
  readonly recordsHydrate: boolean;
  readonly tools: ToolRegistry;
  /** Tools that can change between iterations (MCP servers): brought up to date before each model call. */
  readonly syncTools?: () => Promise<readonly ToolSpec[]>;
  readonly gate: PolicyGate;
  readonly taint?: TaintPolicy;
  readonly executor: Executor;
  readonly stuckGuard: StuckGuard;
  readonly redactor: Redactor;
  readonly scopeOf: (runId: string) => RunScope;
}

const NOTHING_INJECTED: HydrateOutput = Object.freeze({ inject: Object.freeze([]) });

/**
 * Secrets are redacted at the source, before anything enters a run's machine: what the model
 * said, what the gate rewrote, what tools and hydration returned, what failed. No snapshot,
 * event, log record or later model request can then carry one.
 *
 * @example
 * ```ts
 * const machine = agentMachine.provide({ actors: { phases: phaseRunner(agentPhases(options)) } });
 * ```
 */
export function agentPhases(options: AgentPhasesOptions): PhaseImplementations {
  const { agentId, reasonDeps, hydrator, tools, gate, executor, stuckGuard, redactor, scopeOf } = options;
  const clean = redactor.deep;
  const cleanError = (error: unknown): never => {
    throw redactError(error, redactor.text);
  };
  return {
    reason: phase<ReasonOutput, ReasonInput>(({ input, signal }) => {
      const scope = scopeOf(input.runId);
      const recorded = scope.replay?.reply('reason', input.iteration);
      if (recorded !== undefined) return Promise.resolve(recorded);
      const called = options.syncTools === undefined ? reason(input, reasonDeps, scope.reasonScope, signal) : options.syncTools().then((tools) => reason(input, { ...reasonDeps, tools }, scope.reasonScope, signal));
      return called.then((output) => {
        const reply = clean(output);
        scope.persistence?.reply({ kind: 'reason', iteration: input.iteration, output: { ...reply, toolCalls: [...reply.toolCalls] } });
        return reply;
      }, cleanError);
    }),
    ...(hydrator === undefined && !options.recordsHydrate
      ? {}
      : {
          hydrate: phase<HydrateOutput, HydrateInput>(({ input, signal }) => {
            const scope = scopeOf(input.runId);
            const recorded = scope.replay?.reply('hydrate');
            if (recorded !== undefined) return Promise.resolve(recorded);
            const hydrated =
              hydrator === undefined
                ? Promise.resolve(NOTHING_INJECTED)
                : hydrator({ task: input.task, messages: input.messages }, { runId: input.runId, agentId, iteration: 0, signal, emit: scope.emit });
            return hydrated.then((output) => {
              const reply = clean(output);
              scope.persistence?.reply({ kind: 'hydrate', output: { inject: [...reply.inject] } });
              return reply;
            }, cleanError);
          }),
        }),
    gate: phase<GateOutput, GateInput>(({ input }) => {
      const scope = scopeOf(input.runId);
      const recorded = scope.replay?.reply('gate', input.iteration);
      if (recorded !== undefined) return Promise.resolve(recorded);
      return planCalls(input, { tools, gate, ...(options.taint === undefined ? {} : { taint: options.taint }) }, { runId: input.runId, agentId, emit: scope.emit }).then((output) => {
        // A gate may rewrite arguments: what it wrote is redacted like what the model wrote.
        const reply = clean(output);
        scope.persistence?.reply({ kind: 'gate', iteration: input.iteration, output: { plan: [...reply.plan] } });
        return reply;
      }, cleanError);
    }),
    act: phase<ActOutput, ActInput>(async ({ input, cancellation }) => {
      const scope = scopeOf(input.runId);
      const outcomes = await executor
        .run(input.calls, {
          runId: input.runId,
          agentId,
          iteration: input.iteration,
          signal: cancellation,
          emit: scope.emit,
          ...(scope.journal === undefined ? {} : { journal: scope.journal }),
        })
        .catch(cleanError);
      return stuckGuard.check(scope, input.calls, outcomes);
    }),
  };
}

/** A phase's failure with secrets taken out of its message (it reaches the machine's context and the log). */
function redactError(error: unknown, text: (value: string) => string): unknown {
  if (typeof error === 'string') return text(error);
  if (error instanceof Error) {
    const message = text(error.message);
    if (message !== error.message) error.message = message;
  }
  return error;
}
