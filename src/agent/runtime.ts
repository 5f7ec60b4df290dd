import type { ActInput, ActOutput, GateInput, GateOutput, HydrateInput, HydrateOutput, ReasonInput, ReasonOutput } from '../core/run.ts';
import type { ToolSpec } from '../core/provider.ts';
import type { Executor } from '../executor/executor.ts';
import type { PolicyGate } from '../policy/types.ts';
import type { TaintPolicy } from '../policy/taint.ts';
import type { StuckGuard } from '../progress/stuckGuard.ts';
import type { Redactor } from '../security/redactor.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { planCalls, type ToolView } from './gatePhase.ts';
import type { Hydrator } from '../core/hooks.ts';
import { reason, type ReasonPhaseDeps } from './reasonPhase.ts';
import type { RunContext } from '../run/context.ts';
import { phase, type PhaseImplementations } from '../../machines/phaseRunner.ts';
import type { HookRunner, HookScope } from './hooks.ts';
import type { Message } from '../core/messages.ts';

export interface AgentPhasesOptions {
  readonly agentId: string;
  readonly reasonDeps: ReasonPhaseDeps;
  readonly hydrator?: Hydrator;
  /** A hydrate phase even without a hydrator, so persisted runs record its (empty) reply. */
  readonly recordsHydrate: boolean;
  readonly tools: ToolRegistry;
  /** Tools that can change between iterations (MCP servers). */
  readonly syncTools?: () => Promise<readonly ToolSpec[]>;
  readonly gate: PolicyGate;
  readonly gateTimeoutMs?: number;
  readonly taint?: TaintPolicy;
  readonly executor: Executor;
  readonly stuckGuard: StuckGuard;
  readonly redactor: Redactor;
  readonly hooks?: HookRunner;
  readonly toolView?: ToolView;
}

const NOTHING_INJECTED: HydrateOutput = Object.freeze({ inject: Object.freeze([]) });

/** Secrets are redacted at the source, before anything enters a run's machine, so no snapshot, event, log or request carries one. */
export function agentPhases(options: AgentPhasesOptions): PhaseImplementations<RunContext> {
  const { agentId, reasonDeps, hydrator, tools, gate, executor, stuckGuard, redactor, hooks } = options;
  const clean = redactor.deep;
  const cleanError = (error: unknown): never => {
    throw redactError(error, redactor.text);
  };
  /** A failed phase: the `onError` hook hears of it (not of a cancellation), then the run fails with it. */
  const failed =
    hooks?.onError === undefined
      ? cleanError
      : async (error: unknown, scope: HookScope): Promise<never> => {
          const redacted = redactError(error, redactor.text);
          if (!scope.signal.aborted) await hooks.onError?.(redacted, scope);
          throw redacted;
        };
  const hookScope = (runId: string, iteration: number, args: { readonly signal: AbortSignal }, emit: RunContext['emit']): HookScope => ({
    runId,
    agentId,
    iteration,
    // Read only by a hook that wants it: the phase's signal is made on first read.
    get signal() {
      return args.signal;
    },
    emit,
  });
  const offered = (specs: readonly ToolSpec[], messages: ReasonInput['messages']): readonly ToolSpec[] => {
    const view = options.toolView?.(messages);
    return view === undefined ? specs : specs.filter((spec) => view.allows(spec.name));
  };
  const modelCall = (input: ReasonInput, signal: AbortSignal, scope: RunContext): Promise<ReasonOutput> => {
    if (scope.toolsOff) return reason(input, { ...reasonDeps, tools: [] }, scope, signal);
    if (options.syncTools === undefined) {
      const specs = offered(reasonDeps.tools, input.messages);
      return reason(input, specs === reasonDeps.tools ? reasonDeps : { ...reasonDeps, tools: specs }, scope, signal);
    }
    return options.syncTools().then((specs) => reason(input, { ...reasonDeps, tools: offered(specs, input.messages) }, scope, signal));
  };
  const hookedModelCall = async (input: ReasonInput, signal: AbortSignal, scope: RunContext): Promise<ReasonOutput> => {
    const at = hookScope(input.runId, input.iteration, { signal }, scope.emit);
    // The previous turn's observations are in: it has ended.
    if (input.iteration > scope.turnEnded) await endTurn(hooks, scope, at, input.iteration, input.messages);
    await hooks?.onTurnStart?.({ iteration: input.iteration + 1, messages: input.messages }, at);
    const reply = clean(await modelCall(input, signal, scope));
    await hooks?.afterModelCall?.(reply, at);
    // A reply without calls is the final answer: its turn ends here.
    if (reply.toolCalls.length === 0) await endTurn(hooks, scope, at, input.iteration + 1, [...input.messages, { role: 'assistant', content: reply.text ?? '' }]);
    return reply;
  };
  const hooksTheTurn = hooks?.onTurnStart !== undefined || hooks?.onTurnEnd !== undefined || hooks?.afterModelCall !== undefined;
  return {
    reason: phase<ReasonOutput, ReasonInput, RunContext>(({ input, signal, run: scope }) => {
      const called = hooksTheTurn ? hookedModelCall(input, signal, scope) : modelCall(input, signal, scope).then(clean);
      return called.catch((error: unknown) => failed(error, hookScope(input.runId, input.iteration, { signal }, scope.emit)));
    }),
    ...(hydrator === undefined && !options.recordsHydrate
      ? {}
      : {
          hydrate: phase<HydrateOutput, HydrateInput, RunContext>((args) => {
            const { input, run: scope } = args;
            const hydrated =
              hydrator === undefined
                ? Promise.resolve(NOTHING_INJECTED)
                : hydrator({ task: input.task, messages: input.messages }, { runId: input.runId, agentId, iteration: 0, signal: args.signal, emit: scope.emit });
            return hydrated.then(clean, (error: unknown) => failed(error, hookScope(input.runId, 0, args, scope.emit)));
          }),
        }),
    gate: phase<GateOutput, GateInput, RunContext>((args) => {
      const { input, run: scope } = args;
      const at = hooks === undefined ? undefined : hookScope(input.runId, input.iteration, args, scope.emit);
      const deps = {
        tools,
        gate,
        ...(options.gateTimeoutMs === undefined ? {} : { gateTimeoutMs: options.gateTimeoutMs }),
        ...(options.taint === undefined ? {} : { taint: options.taint }),
        ...(hooks?.beforeToolCall === undefined ? {} : { beforeToolCall: hooks.beforeToolCall }),
        ...(options.toolView === undefined ? {} : { toolView: options.toolView }),
      };
      // A gate or hook may rewrite arguments: what it wrote is redacted like what the model wrote.
      return planCalls(input, deps, { runId: input.runId, agentId, emit: scope.emit, ...(at === undefined ? {} : { hooks: at }) }).then(clean, (error: unknown) =>
        failed(error, at ?? hookScope(input.runId, input.iteration, args, scope.emit)),
      );
    }),
    act: phase<ActOutput, ActInput, RunContext>(async (args) => {
      const { input, cancellation, run: scope } = args;
      const afterToolCall = hooks?.afterToolCall;
      const at = hooks === undefined ? undefined : hookScope(input.runId, input.iteration, args, scope.emit);
      // A resumed run replays its model replies without listing its MCP servers' tools: they are connected here.
      if (options.syncTools !== undefined && input.calls.some((call) => !tools.has(call.call.name))) await options.syncTools();
      const outcomes = await executor
        .run(input.calls, {
          runId: input.runId,
          agentId,
          iteration: input.iteration,
          signal: cancellation,
          emit: scope.emit,
          ...(scope.journal === undefined ? {} : { journal: scope.journal }),
          ...(scope.session === undefined ? {} : { session: scope.session }),
          ...(afterToolCall === undefined || at === undefined
            ? {}
            : {
                review: (outcome, call) =>
                  afterToolCall(
                    { toolCallId: outcome.toolCallId, tool: outcome.tool, arguments: call.arguments, status: outcome.status, content: outcome.content, isError: outcome.isError },
                    at,
                  ).then((decision) => (decision === undefined ? outcome : { ...outcome, content: decision.content })),
              }),
        })
        .catch((error: unknown) => failed(error, at ?? hookScope(input.runId, input.iteration, args, scope.emit)));
      return stuckGuard.check(scope, input.calls, outcomes);
    }),
  };
}

export async function endTurn(hooks: HookRunner | undefined, scope: RunContext, at: HookScope, iteration: number, messages: readonly Message[]): Promise<void> {
  if (iteration <= scope.turnEnded) return;
  scope.turnEnded = iteration;
  await hooks?.onTurnEnd?.({ iteration, messages }, at);
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
