/**
 * The strategy runner as a statechart:
 *
 *   init ─▶ step ─▶ decided ─┬─▶ step          (continue | revise)
 *                            ├─▶ branching ─▶ aggregate ─▶ decided …
 *                            ├─▶ done        (done)
 *                            └─▶ failed      (error | max rounds | a strategy call threw)
 *   any state ── strategy.cancel ──▶ cancelled   ── timeout | strategy.expire ──▶ failed
 *
 * Pure: no I/O. The strategy's `init`, `step` and `aggregate` are promise actors registered by
 * name; a branch is a `subAgentMachine` whose agent loop runs as its child. The runtime supplies
 * them with `.provide()`. Branches are spawned as children of the runner (`spawnChild`, one id
 * per branch), at most
 * `concurrency` at once, the rest queued in order. A failed branch becomes an error thought
 * (`metadata.error`) and the others go on. Every decision is emitted as `strategy.decided`,
 * every branch as `branch.started` / `branch.finished`.
 *
 * @example
 * ```ts
 * const machine = strategyMachine.provide({ actors: { init, step, aggregate, branch } });
 * const actor = createActor(machine, { input, inspect });
 * actor.on('*', (event) => journal(event));
 * actor.start();
 * ```
 */
import { assign, emit, enqueueActions, setup, type AnyActorLogic } from 'xstate';
import { notProvided } from './notProvided.ts';
import type { Usage } from '../src/core/provider.ts';
import type {
  InFlightBranch,
  StrategyBranchInput,
  StrategyBranchOutput,
  StrategyDecideInput,
  StrategyDecideOutput,
  StrategyEmitted,
  StrategyEndReason,
  StrategyInitInput,
  StrategyInitOutput,
  StrategyMachineContext,
  StrategyMachineEvent,
  StrategyMachineInput,
  StrategyMachineOutput,
  StrategyTermination,
} from './strategy.types.ts';
import { STRATEGY_ERROR_CODE, STRATEGY_TERMINATION } from './strategy.types.ts';
import type { Branch, StrategyDecision, Thought } from '../src/core/strategy.ts';


const DETAIL_CHARS = 160;
const ZERO: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

function addUsage(a: Usage, b: Usage | undefined): Usage {
  if (b === undefined) return a;
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}

function clip(text: string, max = DETAIL_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === 'string' ? error : String(error);
}

/** A short, human-readable account of a decision: the strategy's own `detail` when it gave one. */
function describeDecision(decision: StrategyDecision<unknown>): string {
  if (decision.detail !== undefined && decision.detail !== '') return clip(decision.detail);
  switch (decision.kind) {
    case 'continue':
      return clip(`thought ${decision.thought.id}: ${decision.thought.content}`);
    case 'branch': {
      const ids = decision.branches.map((b) => b.id);
      return clip(`${ids.length} branch${ids.length === 1 ? '' : 'es'}: ${ids.slice(0, 8).join(', ')}${ids.length > 8 ? ', …' : ''}`);
    }
    case 'revise':
      return clip(`feedback: ${decision.feedback}`);
    case 'done':
      return clip(`answer: ${decision.answer}`);
    case 'error':
      return clip(decision.reason);
  }
}

/** Child ids contain no dots: XState matches `xstate.done.actor.*` token by token. */
function branchActorId(round: number, index: number, branch: Branch): string {
  return `branch:${round}:${index}:${branch.id.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40)}`;
}

function errorThought(branch: Branch, error: unknown): Thought {
  return {
    id: branch.id,
    content: '',
    ...(branch.parentId === undefined ? {} : { parentId: branch.parentId }),
    metadata: { ...branch.metadata, error: messageOf(error) },
  };
}

function durationOf(error: unknown): number {
  const value = error !== null && typeof error === 'object' ? (error as { durationMs?: unknown }).durationMs : undefined;
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function end(reason: StrategyEndReason, message?: string, error?: unknown): StrategyTermination {
  return { reason, ...(message === undefined ? {} : { message }), ...(error === undefined ? {} : { error }) };
}

/** Context after a branch settled: its thought recorded, its slot freed. */
function settle(context: StrategyMachineContext, slot: InFlightBranch, thought: Thought, output?: StrategyBranchOutput) {
  const results = [...context.results];
  results[slot.index] = thought;
  return {
    results,
    inFlight: context.inFlight.filter((f) => f !== slot),
    usage: addUsage(context.usage, output?.usage),
    costUsd: context.costUsd + (output?.costUsd ?? 0),
  };
}

function slotOf(context: StrategyMachineContext, actorId: string): InFlightBranch | undefined {
  return context.inFlight.find((f) => f.actorId === actorId);
}

export const strategyMachine = setup({
  types: {
    context: {} as StrategyMachineContext,
    events: {} as StrategyMachineEvent,
    input: {} as StrategyMachineInput,
    output: {} as StrategyMachineOutput,
    emitted: {} as StrategyEmitted,
  },
  actors: {
    init: notProvided<StrategyInitOutput, StrategyInitInput>('strategy', 'init'),
    step: notProvided<StrategyDecideOutput, StrategyDecideInput>('strategy', 'step'),
    aggregate: notProvided<StrategyDecideOutput, StrategyDecideInput>('strategy', 'aggregate'),
    /** A branch is a sub-agent run: logic whose output is the branch's `StrategyBranchOutput`; the runtime provides `subAgentMachine`. */
    branch: notProvided<StrategyBranchOutput, StrategyBranchInput>('strategy', 'branch') as AnyActorLogic,
  },
  actions: {
    /** Record a decision from `step` or `aggregate` and announce it. */
    recordDecision: enqueueActions(({ context, enqueue }, output: StrategyDecideOutput) => {
      const { decision } = output;
      const round = context.round + 1;
      enqueue.assign({
        round,
        state: decision.state,
        decision,
        usage: addUsage(context.usage, output.usage),
        costUsd: context.costUsd + (output.costUsd ?? 0),
        thoughts: decision.kind === 'continue' ? [...context.thoughts, decision.thought] : context.thoughts,
        answer: decision.kind === 'done' ? decision.answer : context.answer,
        ...(decision.kind === 'error' ? { termination: end('error', decision.reason) } : {}),
      });
      enqueue.emit({
        type: 'strategy.decided' as const,
        strategy: context.strategy,
        decision: decision.kind,
        round,
        detail: describeDecision(decision),
      });
    }),
    /** Start queued branches while there is room under the concurrency bound. */
    launchBranches: enqueueActions(({ context, enqueue }) => {
      const room = Math.max(1, context.concurrency) - context.inFlight.length;
      const starting: InFlightBranch[] = [];
      for (let i = context.nextBranch; i < context.branches.length && starting.length < room; i++) {
        starting.push({ actorId: branchActorId(context.round, i, context.branches[i] as Branch), index: i });
      }
      if (starting.length === 0) return;
      const inFlight = [...context.inFlight, ...starting];
      enqueue.assign({
        nextBranch: context.nextBranch + starting.length,
        inFlight,
        peakInFlight: Math.max(context.peakInFlight, inFlight.length),
      });
      for (const { actorId, index } of starting) {
        const branch = context.branches[index] as Branch;
        enqueue.spawnChild('branch', {
          id: actorId,
          input: { runId: context.runId, round: context.round, index, branch } satisfies StrategyBranchInput,
        });
        enqueue.emit({
          type: 'branch.started' as const,
          branchId: branch.id,
          ...(branch.parentId === undefined ? {} : { parentId: branch.parentId }),
        });
      }
    }),
    /**
     * Record a settled branch, free its slot and remove its finished actor from the runner's
     * children. A branch that threw, or gave no thought, becomes an error thought
     * (`metadata.error`): one bad branch never sinks the others.
     */
    settleBranch: enqueueActions(({ context, event, enqueue }) => {
      if (!('actorId' in event)) return;
      const slot = slotOf(context, event.actorId);
      if (slot === undefined) return;
      enqueue.stopChild(slot.actorId);
      const branch = context.branches[slot.index] as Branch;
      if ('error' in event) {
        enqueue.assign(settle(context, slot, errorThought(branch, event.error)));
        enqueue.emit({ type: 'branch.finished' as const, branchId: branch.id, ok: false, durationMs: durationOf(event.error) });
        return;
      }
      const output = event.output as StrategyBranchOutput | undefined;
      const thought = output?.thought ?? errorThought(branch, 'the branch returned no thought');
      enqueue.assign(settle(context, slot, thought, output));
      enqueue.emit({
        type: 'branch.finished' as const,
        branchId: branch.id,
        ok: thought.metadata?.error === undefined,
        ...(thought.score === undefined ? {} : { score: thought.score }),
        durationMs: output?.durationMs ?? 0,
        ...(output?.runId === undefined ? {} : { runId: output.runId }),
      });
    }),
    /** Stop every branch still running: their AbortSignals fire. */
    stopBranches: enqueueActions(({ context, enqueue }) => {
      for (const { actorId } of context.inFlight) enqueue.stopChild(actorId);
      if (context.inFlight.length > 0) enqueue.assign({ inFlight: [] });
    }),
    emitTerminated: emit(({ context }) => ({
      type: 'run.terminated' as const,
      reason: STRATEGY_TERMINATION[context.termination?.reason ?? 'exception'],
      iterations: context.round,
      usage: { ...context.usage },
      ...(context.termination === null || context.termination.reason === 'done'
        ? {}
        : {
            error: {
              name: 'StrategyRunError',
              code: STRATEGY_ERROR_CODE[context.termination.reason],
              message: context.termination.message ?? context.termination.reason,
            },
          }),
    })),
  },
  guards: {
    decidedDone: ({ context }) => context.decision?.kind === 'done',
    decidedError: ({ context }) => context.decision?.kind === 'error',
    decidedBranch: ({ context }) => context.decision?.kind === 'branch',
    /** No decision after this one is allowed: a `continue`, `revise` or `branch` would need one. */
    roundsExhausted: ({ context }) => context.round >= context.maxRounds,
    allBranchesSettled: ({ context }) => context.inFlight.length === 0 && context.nextBranch >= context.branches.length,
    /** A done/error event of one of this fan-out's branches (not a stray one from a stopped child). */
    isInFlightBranch: ({ context, event }) => 'actorId' in event && slotOf(context, event.actorId) !== undefined,
  },
  delays: {
    strategyTimeout: ({ context }) => context.timeoutMs,
  },
}).createMachine({
  id: 'strategy',
  description: 'Runs a reasoning strategy: its decisions drive steps and fan-outs of sub-agent branches.',
  context: ({ input }) => ({
    runId: input.runId,
    strategy: input.strategy,
    task: input.task,
    model: input.model,
    maxRounds: input.maxRounds,
    concurrency: input.concurrency,
    timeoutMs: input.timeoutMs,
    state: undefined,
    round: 0,
    thoughts: [],
    decision: null,
    branches: [],
    results: [],
    nextBranch: 0,
    inFlight: [],
    peakInFlight: 0,
    usage: ZERO,
    costUsd: 0,
    answer: null,
    termination: null,
  }),
  initial: 'running',
  states: {
    running: {
      description: 'The strategy is deciding or its branches are running. Cancellation and the wall-clock budget apply throughout.',
      entry: emit(({ context }) => ({ type: 'run.started' as const, task: context.task, model: context.model, tools: [] })),
      after: {
        strategyTimeout: {
          target: 'failed',
          actions: ['stopBranches', assign({ termination: ({ context }) => end('timeout', `the strategy ran longer than ${context.timeoutMs} ms`) })],
        },
      },
      on: {
        'strategy.expire': {
          target: 'failed',
          actions: ['stopBranches', assign({ termination: ({ context }) => end('timeout', `the strategy ran longer than ${context.timeoutMs} ms`) })],
        },
        'strategy.cancel': {
          target: 'cancelled',
          actions: ['stopBranches', assign({ termination: ({ event }) => end('cancelled', event.reason ?? 'cancelled by the caller') })],
        },
      },
      initial: 'init',
      states: {
        init: {
          description: 'The strategy builds its private state from its options.',
          invoke: {
            src: 'init',
            input: ({ context }) => ({ runId: context.runId, task: context.task }),
            onDone: {
              target: 'step',
              actions: assign(({ context, event }) => ({
                state: event.output.state,
                usage: addUsage(context.usage, event.output.usage),
                costUsd: context.costUsd + (event.output.costUsd ?? 0),
              })),
            },
            onError: { target: '#strategy.failed', actions: assign({ termination: ({ event }) => end('exception', messageOf(event.error), event.error) }) },
          },
        },
        step: {
          description: 'One strategy step: continue, branch, revise, done or error.',
          invoke: {
            src: 'step',
            input: ({ context }) => ({ runId: context.runId, task: context.task, round: context.round + 1, state: context.state }),
            onDone: { target: 'decided', actions: { type: 'recordDecision', params: ({ event }) => event.output } },
            onError: { target: '#strategy.failed', actions: assign({ termination: ({ event }) => end('exception', messageOf(event.error), event.error) }) },
          },
        },
        decided: {
          description: 'Routes the last decision; the max-rounds guard stops a strategy that would go on forever.',
          always: [
            { guard: 'decidedDone', target: '#strategy.done' },
            { guard: 'decidedError', target: '#strategy.failed' },
            {
              guard: 'roundsExhausted',
              target: '#strategy.failed',
              actions: assign({
                termination: ({ context }) =>
                  end('max_rounds', `the strategy made ${context.round} decisions without finishing (maxRounds ${context.maxRounds})`),
              }),
            },
            { guard: 'decidedBranch', target: 'branching' },
            { target: 'step' },
          ],
        },
        branching: {
          description: 'Branches run as sub-agent children, at most `concurrency` at once; each result becomes a thought.',
          entry: [
            assign(({ context }) => {
              const branches = context.decision?.kind === 'branch' ? context.decision.branches : [];
              return { branches, results: branches.map(() => null), nextBranch: 0, inFlight: [] };
            }),
            'launchBranches',
          ],
          exit: 'stopBranches',
          on: {
            'xstate.done.actor.*': { guard: 'isInFlightBranch', actions: ['settleBranch', 'launchBranches'] },
            'xstate.error.actor.*': { guard: 'isInFlightBranch', actions: ['settleBranch', 'launchBranches'] },
          },
          always: { guard: 'allBranchesSettled', target: 'aggregate' },
        },
        aggregate: {
          description: 'The strategy folds the branch thoughts (failed ones as error thoughts) into its next decision.',
          entry: assign(({ context }) => ({ thoughts: [...context.thoughts, ...context.results.filter((t): t is Thought => t !== null)] })),
          invoke: {
            src: 'aggregate',
            input: ({ context }) => ({
              runId: context.runId,
              task: context.task,
              round: context.round + 1,
              state: context.state,
              thoughts: context.results.filter((t): t is Thought => t !== null),
            }),
            onDone: { target: 'decided', actions: { type: 'recordDecision', params: ({ event }) => event.output } },
            onError: { target: '#strategy.failed', actions: assign({ termination: ({ event }) => end('exception', messageOf(event.error), event.error) }) },
          },
        },
      },
    },
    done: {
      type: 'final',
      description: 'The strategy converged on an answer.',
      entry: [assign({ termination: () => end('done') }), 'emitTerminated'],
    },
    failed: {
      type: 'final',
      description: 'The strategy decided it failed, a strategy call threw, or max rounds or the timeout was reached.',
      entry: 'emitTerminated',
    },
    cancelled: {
      type: 'final',
      description: 'Cancelled by the caller; every running branch was stopped (its AbortSignal fired).',
      entry: 'emitTerminated',
    },
  },
  output: ({ context }) => ({
    reason: context.termination?.reason ?? 'exception',
    answer: context.answer,
    thoughts: context.thoughts,
    rounds: context.round,
    usage: context.usage,
    costUsd: context.costUsd,
    peakInFlight: context.peakInFlight,
    ...(context.termination?.message === undefined ? {} : { message: context.termination.message }),
    ...(context.termination?.error === undefined ? {} : { error: context.termination.error }),
  }),
});

export type StrategyMachine = typeof strategyMachine;
