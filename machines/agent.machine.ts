/**
 * The agent loop as a statechart: hydrate → reason → gate → act → observe → reason …
 *
 * Pure: no I/O. The four side-effecting steps run in one worker actor (`phases`, invoked for
 * the whole run; see phaseRunner.ts): entering a phase's state sends it `phase.run`, and its
 * `<phase>.done` reply (or `phase.error`) takes the transition out. The runtime supplies real
 * implementations with `agentMachine.provide()`, tests supply scripted ones. Every decision is
 * emitted as a `LoopEvent` (`actor.on('*', …)`), so the runtime can journal and publish it
 * without the machine knowing about either.
 *
 * @example
 * ```ts
 * const machine = agentMachine.provide({ actors: { phases: phaseRunner({ reason, gate, act }) } });
 * const actor = createActor(machine, { input, inspect });
 * actor.on('*', (event) => console.log(event.type));
 * actor.start();
 * ```
 */
import { assign, emit, sendTo, setup } from 'xstate';
import { reasoningText, type Message } from '../src/core/messages.ts';
import { capJournalDetail, type TerminationReason } from '../src/core/loopEvent.ts';
import { addUsage } from '../src/core/provider.ts';
import type { AgentContext, AgentEmitted, AgentEvent, AgentMachineInput, AgentOutput } from './agent.types.ts';
import type { ActOutput, GateOutput, PlannedCall, ReasonOutput } from '../src/core/run.ts';
import {
  appendObservations,
  observationsOf,
  confirmationReasons,
  dispatchedCalls,
  errorData,
  gatedTurn,
  hasPendingHuman,
  hasRunnableCalls,
  isStuck,
  assistantMessage,
  lengthTermination,
  observationErrors,
  refusalTermination,
  outcomesAfterAct,
  pendingHuman,
  resolveHuman,
  runnableCalls,
  stuckTermination,
  turnWasAllInvalid,
  type TurnCalls,
} from './agent.logic.ts';
import { phaseRunner, type PhaseJob, type PhaseReply } from './phaseRunner.ts';

function terminate(reason: TerminationReason, error?: unknown) {
  return { reason, ...(error === undefined ? {} : { error, errorData: errorData(error) }) };
}

/** How a run ends whose final answer missed its schema once more than the repair turns allow: what was wrong last. */
function answerExhausted(context: AgentContext) {
  const last = context.messages[context.messages.length - 1];
  const why = last === undefined || last.role === 'assistant' || typeof last.content !== 'string' ? 'it did not match' : last.content;
  return {
    reason: 'model_behavior' as const,
    errorData: { name: 'StructuredOutputError', code: 'structured_output', message: why, blame: 'model' as const },
  };
}

/** A human's answer to `awaitingHuman`, as the actions that apply it take it. */
interface HumanDecision {
  readonly decision: 'approve' | 'reject';
  readonly toolCallIds: readonly string[] | undefined;
  readonly reason?: string;
}

/*
 * Routing happens on the transitions that produce what is routed (a phase's result, a human
 * decision), not in transient states after them: every state entered costs XState a microstep —
 * a new snapshot, state-node sets, action resolution — and a run takes thousands. A guard runs
 * before its transition's actions, so each branch of a route carries the same assignment and the
 * guards get, as params, what that assignment will produce (`TurnCalls`, the reply).
 */

/** The error a failed phase (or the failed worker) ended the run with. */
const errorOf = ({ event }: { event: { error: unknown } }): unknown => event.error;

/** The model's reply, and the actions every branch after `reason` shares. */
const replyOf = ({ event }: { event: { output: ReasonOutput } }): ReasonOutput => event.output;
const recordReply = [
  { type: 'recordReasoning', params: replyOf },
  { type: 'emitReasoning', params: replyOf },
] as const;

/** The assignment every branch after `gate` shares, and the turn it leaves. */
const recordGate = { type: 'recordPlan', params: ({ event }: { event: { output: GateOutput } }): GateOutput => event.output } as const;
const turnAfterGate = ({ event }: { event: { output: GateOutput } }): TurnCalls => gatedTurn(event.output.plan);

/** The assignment every branch after `act` shares, and the turn it leaves. */
const recordAct = { type: 'recordOutcomes', params: ({ event }: { event: { output: ActOutput } }): ActOutput => event.output } as const;
const turnAfterAct = ({ context, event }: { context: AgentContext; event: { output: ActOutput } }): TurnCalls => ({
  plan: context.plan,
  outcomes: outcomesAfterAct(context, event.output),
});

type ApproveEvent = Extract<AgentEvent, { type: 'agent.approve' }>;
type RejectEvent = Extract<AgentEvent, { type: 'agent.reject' }>;
const approval = ({ event }: { event: ApproveEvent }): HumanDecision => ({ decision: 'approve', toolCallIds: event.toolCallIds });
const rejection = ({ event }: { event: RejectEvent }): HumanDecision => ({
  decision: 'reject',
  toolCallIds: event.toolCallIds,
  ...(event.reason === undefined ? {} : { reason: event.reason }),
});
/** Emitted first, reading the pending ids from the plan: the assignment resolves the calls. */
const recordApproval = [
  { type: 'emitHumanDecided', params: approval },
  { type: 'applyHumanDecision', params: approval },
] as const;
const recordRejection = [
  { type: 'emitHumanDecided', params: rejection },
  { type: 'applyHumanDecision', params: rejection },
] as const;
const turnAfterApproval = ({ context, event }: { context: AgentContext; event: ApproveEvent }): TurnCalls =>
  resolveHuman(context, 'approve', event.toolCallIds);
const turnAfterRejection = ({ context, event }: { context: AgentContext; event: RejectEvent }): TurnCalls =>
  resolveHuman(context, 'reject', event.toolCallIds, event.reason);

export const agentMachine = setup({
  types: {
    context: {} as AgentContext,
    // The caller's events, and the `phases` worker's replies.
    events: {} as AgentEvent | PhaseReply,
    input: {} as AgentMachineInput,
    output: {} as AgentOutput,
    emitted: {} as AgentEmitted,
  },
  actors: {
    // Hydrate injects nothing; the other phases fail with what to provide.
    phases: phaseRunner({}),
  },
  actions: {
    // Entry action of each phase state: hand the phase to the `phases` worker.
    runPhase: sendTo('phases', (_, job: PhaseJob) => ({ type: 'phase.run' as const, job })),
    // A phase's failure, or the worker's own, ends the run with the error.
    recordError: assign((_, error: unknown) => ({ termination: terminate('error', error) })),
    emitTerminated: emit(({ context }) => ({
      type: 'run.terminated' as const,
      reason: context.termination?.reason ?? 'error',
      iterations: context.iteration,
      usage: { ...context.usage },
      ...(context.termination?.errorData === undefined ? {} : { error: context.termination.errorData }),
    })),
    recordReasoning: assign(({ context }, output: ReasonOutput) => {
      const { text, toolCalls, usage, costUsd } = output;
      const assistant: Message = assistantMessage(output);
      // A refusal or a cut-off reply is not an answer: the result's text stays empty.
      const answer = output.refusal === undefined ? text : null;
      const planned = output.refusal === undefined && output.truncated !== true ? toolCalls : [];
      return {
        iteration: context.iteration + 1,
        // concat: one copy of the history at its exact size (see appendObservations).
        messages: context.messages.concat([assistant]),
        usage: {
          promptTokens: context.usage.promptTokens + usage.promptTokens,
          completionTokens: context.usage.completionTokens + usage.completionTokens,
          totalTokens: context.usage.totalTokens + usage.totalTokens,
          ...(context.usage.estimated === true || usage.estimated === true ? { estimated: true as const } : {}),
        },
        costUsd: context.costUsd + costUsd,
        text: answer,
        plan: planned.map((call): PlannedCall => ({ call, arguments: undefined, verdict: 'blocked' })),
        ...(output.output === undefined ? {} : { output: output.output }),
        // Kept in the context (so in checkpoints), the limit holds for the rest of the run, resumed too.
        ...(output.contextLimit === undefined ? {} : { contextLimit: output.contextLimit }),
      };
    }),
    // A final answer that missed its schema: what was wrong follows it, and the model tries again.
    recordRepair: assign(({ context }, output: ReasonOutput) => ({
      messages: context.messages.concat(output.repair ?? []),
      plan: [],
      outcomes: [],
      repairTurns: context.repairTurns + 1,
    })),
    emitReasoning: emit((_, output: ReasonOutput) => ({
      type: 'reasoning.completed' as const,
      text: output.text,
      // The arguments ride along (capped) so a reader of the journal alone can show the call; a signature whole, or it is void.
      toolCalls: output.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: capJournalDetail(c.arguments), ...(c.extraContent === undefined ? {} : { extraContent: c.extraContent }) })),
      usage: { ...output.usage },
      costUsd: output.costUsd,
      ...(output.reasoning === undefined || reasoningText(output.reasoning) === '' ? {} : { reasoning: reasoningText(output.reasoning) }),
      ...(output.call === undefined ? {} : { call: output.call }),
    })),
    // A refusal, or a reply cut off at the token cap under the `end` policy, ends the run.
    recordRefusal: assign((_, output: ReasonOutput) => ({ termination: refusalTermination(output.refusal ?? '') })),
    emitTruncated: emit((_, output: ReasonOutput) => ({
      type: 'reply.truncated' as const,
      action: 'end' as const,
      continuation: output.continuations ?? 0,
      completionTokens: output.usage.completionTokens,
    })),
    recordTruncation: assign((_, output: ReasonOutput) => ({ termination: lengthTermination(output.usage.completionTokens) })),
    recordPlan: assign(({ context }, output: GateOutput) => ({
      plan: output.plan,
      outcomes: output.plan.map(() => null),
      repairTurns: turnWasAllInvalid(output.plan) ? context.repairTurns + 1 : 0,
    })),
    recordOutcomes: assign(({ context }, output: ActOutput) => ({
      outcomes: outcomesAfterAct(context, output),
      // Sticky: a later act phase of the same turn (after a human decision) must not clear it.
      stuck: output.stuck?.reason ?? context.stuck,
    })),
    // `pending` is already cleared (the exit action ran): the ids come from the plan.
    emitHumanDecided: emit(({ context }, human: HumanDecision) => ({
      type: 'human.decided' as const,
      decision: human.decision,
      toolCallIds: [...(human.toolCallIds ?? pendingHuman(context)?.toolCallIds ?? [])],
      ...(human.reason === undefined ? {} : { reason: human.reason }),
    })),
    applyHumanDecision: assign(({ context }, human: HumanDecision) => resolveHuman(context, human.decision, human.toolCallIds, human.reason)),
  },
  delays: {
    runTimeout: ({ context }) => context.limits.timeoutMs,
  },
  guards: {
    // Routing guards: params are what the transition is about to assign (see above).
    proposesToolCalls: (_, reply: ReasonOutput) => reply.toolCalls.length > 0,
    refused: (_, reply: ReasonOutput) => reply.refusal !== undefined,
    truncated: (_, reply: ReasonOutput) => reply.truncated === true,
    answerRejected: (_, reply: ReasonOutput) => reply.repair !== undefined,
    awaitsHuman: (_, turn: TurnCalls) => hasPendingHuman(turn),
    hasRunnableCalls: (_, turn: TurnCalls) => hasRunnableCalls(turn),
    isStuck: ({ context }) => isStuck(context),
    tokensExhausted: ({ context }) => context.usage.totalTokens >= context.limits.maxTotalTokens,
    iterationsExhausted: ({ context }) => context.iteration >= context.limits.maxIterations,
    repairsExhausted: ({ context }) => context.repairTurns > context.limits.maxRepairTurns,
  },
}).createMachine({
  id: 'agent',
  description: 'One run of the Observe → Reason → Gate → Act loop.',
  context: ({ input }) => {
    const messages: Message[] = [];
    if (input.system !== undefined && input.system !== '') messages.push({ role: 'system', content: input.system });
    if (input.history !== undefined) messages.push(...input.history);
    messages.push({ role: 'user', content: input.content === undefined ? input.task : [...input.content] });
    return {
      runId: input.runId,
      agentId: input.agentId,
      task: input.task,
      model: input.model,
      toolNames: input.toolNames,
      ...(input.mode === undefined ? {} : { mode: input.mode }),
      limits: input.limits,
      messages,
      iteration: 0,
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      costUsd: 0,
      repairTurns: 0,
      plan: [],
      outcomes: [],
      pending: null,
      text: null,
      stuck: null,
      termination: null,
    };
  },
  initial: 'running',
  states: {
    running: {
      description: 'The loop proper. Cancellation and the wall-clock budget apply to every phase.',
      entry: emit(({ context }) => ({
        type: 'run.started' as const,
        task: context.task,
        model: context.model,
        tools: [...context.toolNames],
        ...(context.mode === undefined ? {} : { mode: context.mode }),
      })),
      after: {
        runTimeout: { target: 'failed', actions: assign({ termination: () => terminate('timeout') }) },
      },
      // The worker that runs every phase of the run; stopped (aborting its phase) when the run ends.
      invoke: {
        id: 'phases',
        src: 'phases',
        // A phase's own failure arrives as `phase.error`; this is the worker itself failing.
        onError: { target: 'failed', actions: { type: 'recordError', params: errorOf } },
      },
      on: {
        'agent.cancel': { target: 'cancelled', actions: assign({ termination: () => terminate('cancelled') }) },
        'agent.usage': { actions: assign(({ context, event }) => ({ usage: addUsage(context.usage, event.usage), costUsd: context.costUsd + event.costUsd })) },
        'phase.error': { target: 'failed', actions: { type: 'recordError', params: errorOf } },
      },
      initial: 'hydrate',
      states: {
        hydrate: {
          description: 'Pre-hydration: resolve references in the task before the first model call.',
          entry: [
            emit({ type: 'phase.entered' as const, phase: 'hydrate' as const }),
            { type: 'runPhase', params: ({ context }) => ({ phase: 'hydrate', input: { runId: context.runId, task: context.task, messages: context.messages } }) },
          ],
          on: {
            'hydrate.done': {
              target: 'reason',
              actions: assign(({ context, event }) => {
                const { inject, experiences } = event.output;
                // Injected context goes right before the task (the last message).
                const messages = inject.length === 0 ? context.messages : [...context.messages.slice(0, -1), ...inject, ...context.messages.slice(-1)];
                // Kept in the context, so a run restored from a snapshot still knows what it was shown.
                return experiences === undefined || experiences.length === 0 ? { messages } : { messages, experiences: [...experiences] };
              }),
            },
          },
        },
        reason: {
          description: 'The model proposes tool calls or a final answer.',
          entry: [
            emit({ type: 'phase.entered' as const, phase: 'reason' as const }),
            {
              type: 'runPhase',
              params: ({ context }) => ({
                phase: 'reason',
                input: {
                  runId: context.runId,
                  iteration: context.iteration,
                  messages: context.messages,
                  ...(context.contextLimit === undefined ? {} : { contextLimit: context.contextLimit }),
                },
              }),
            },
          ],
          on: {
            // A refusal or a reply cut off at the token cap ends the run; tool calls go to the gate;
            // a reply without calls is the final answer.
            'reason.done': [
              { guard: { type: 'refused', params: replyOf }, target: '#agent.failed', actions: [...recordReply, { type: 'recordRefusal', params: replyOf }] },
              {
                guard: { type: 'truncated', params: replyOf },
                target: '#agent.failed',
                actions: [...recordReply, { type: 'emitTruncated', params: replyOf }, { type: 'recordTruncation', params: replyOf }],
              },
              { guard: { type: 'answerRejected', params: replyOf }, target: 'repairAnswer', actions: [...recordReply, { type: 'recordRepair', params: replyOf }] },
              { guard: { type: 'proposesToolCalls', params: replyOf }, target: 'gate', actions: recordReply },
              { target: '#agent.done', actions: recordReply },
            ],
          },
        },
        gate: {
          description: 'The policy gate allows, denies or modifies each proposed call.',
          entry: [
            emit({ type: 'phase.entered' as const, phase: 'gate' as const }),
            { type: 'runPhase', params: ({ context }) => ({
              phase: 'gate',
              input: { runId: context.runId, iteration: context.iteration, calls: context.plan.map((p) => p.call), messages: context.messages },
            }) },
          ],
          on: {
            // Wait for a human, run what is runnable, or observe the (blocked) results.
            'gate.done': [
              { guard: { type: 'awaitsHuman', params: turnAfterGate }, target: 'awaitingHuman', actions: recordGate },
              { guard: { type: 'hasRunnableCalls', params: turnAfterGate }, target: 'act', actions: recordGate },
              { target: 'observe', actions: recordGate },
            ],
          },
        },
        awaitingHuman: {
          description: 'Waiting for a human to approve or reject calls that need confirmation or were escalated.',
          entry: [
            // No phase runs while a human decides: a run persisted here restores with an idle worker.
            sendTo('phases', { type: 'phase.idle' as const }),
            assign({ pending: ({ context }) => pendingHuman(context) }),
            emit({ type: 'phase.entered' as const, phase: 'awaitingHuman' as const }),
            emit(({ context }) => {
              const reasons = confirmationReasons(context, context.pending ?? null);
              return {
                type: 'human.awaiting' as const,
                kind: context.pending?.kind ?? 'confirmation',
                toolCallIds: [...(context.pending?.toolCallIds ?? [])],
                ...(reasons.length === 0 ? {} : { reasons }),
              };
            }),
          ],
          // A decision may leave calls pending (re-entering, so the wait is announced again), let
          // calls run, or settle the turn.
          on: {
            'agent.approve': [
              { guard: { type: 'awaitsHuman', params: turnAfterApproval }, target: 'awaitingHuman', reenter: true, actions: recordApproval },
              { guard: { type: 'hasRunnableCalls', params: turnAfterApproval }, target: 'act', actions: recordApproval },
              { target: 'observe', actions: recordApproval },
            ],
            'agent.reject': [
              { guard: { type: 'awaitsHuman', params: turnAfterRejection }, target: 'awaitingHuman', reenter: true, actions: recordRejection },
              { guard: { type: 'hasRunnableCalls', params: turnAfterRejection }, target: 'act', actions: recordRejection },
              { target: 'observe', actions: recordRejection },
            ],
          },
          exit: assign({ pending: null }),
        },
        act: {
          description: 'Approved calls run in parallel under concurrency, timeout, breaker and recovery rules.',
          entry: [
            emit({ type: 'phase.entered' as const, phase: 'act' as const }),
            emit(({ context }) => ({
              type: 'tools.dispatched' as const,
              calls: dispatchedCalls(context),
            })),
            { type: 'runPhase', params: ({ context }) => ({ phase: 'act', input: { runId: context.runId, iteration: context.iteration, calls: runnableCalls(context) } }) },
          ],
          on: {
            // Every runnable call now has an outcome (see outcomesAfterAct): escalated failures wait
            // for a human, everything else is observed.
            'act.done': [
              { guard: { type: 'awaitsHuman', params: turnAfterAct }, target: 'awaitingHuman', actions: recordAct },
              { target: 'observe', actions: recordAct },
            ],
          },
        },
        repairAnswer: {
          description: 'The final answer did not match the output schema; the model gets a repair turn while the limits allow.',
          always: [
            { guard: 'repairsExhausted', target: '#agent.failed', actions: assign({ termination: ({ context }) => answerExhausted(context) }) },
            { guard: 'tokensExhausted', target: '#agent.failed', actions: assign({ termination: () => terminate('max_tokens') }) },
            { guard: 'iterationsExhausted', target: '#agent.failed', actions: assign({ termination: () => terminate('max_iterations') }) },
            { target: 'reason' },
          ],
        },
        observe: {
          description: 'Results enter the conversation; limits decide whether the loop continues.',
          entry: [
            emit({ type: 'phase.entered' as const, phase: 'observe' as const }),
            emit(({ context }) => ({
              type: 'observations.collected' as const,
              count: context.plan.length,
              errors: observationErrors(context),
              results: observationsOf(context).map((m) => ({ toolCallId: m.toolCallId, content: capJournalDetail(m.content) })),
            })),
            assign(({ context }) => ({ messages: appendObservations(context), plan: [], outcomes: [] })),
          ],
          always: [
            // First: a stuck run would otherwise spin until another limit, burning tokens.
            { guard: 'isStuck', target: '#agent.failed', actions: assign({ termination: ({ context }) => stuckTermination(context.stuck) }) },
            { guard: 'repairsExhausted', target: '#agent.failed', actions: assign({ termination: () => terminate('model_behavior') }) },
            { guard: 'tokensExhausted', target: '#agent.failed', actions: assign({ termination: () => terminate('max_tokens') }) },
            { guard: 'iterationsExhausted', target: '#agent.failed', actions: assign({ termination: () => terminate('max_iterations') }) },
            { target: 'reason' },
          ],
        },
      },
    },
    done: {
      type: 'final',
      description: 'The model gave a final answer.',
      entry: [assign({ termination: () => terminate('final_answer') }), 'emitTerminated'],
    },
    failed: {
      type: 'final',
      description: 'A limit was reached or an unrecoverable error happened.',
      entry: 'emitTerminated',
    },
    cancelled: {
      type: 'final',
      description: 'Cancelled by the caller; in-flight model and tool calls were aborted.',
      entry: 'emitTerminated',
    },
  },
  output: ({ context }) => ({
    runId: context.runId,
    agentId: context.agentId,
    reason: context.termination?.reason ?? 'error',
    text: context.text,
    iterations: context.iteration,
    usage: context.usage,
    costUsd: context.costUsd,
    messages: context.messages,
    ...(context.output === undefined ? {} : { output: context.output }),
    ...(context.termination?.error === undefined ? {} : { error: context.termination.error }),
    ...(context.termination?.errorData === undefined ? {} : { errorData: context.termination.errorData }),
  }),
});

export type AgentMachine = typeof agentMachine;
