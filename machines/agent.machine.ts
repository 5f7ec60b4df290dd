/**
 * The agent loop as a statechart: hydrate → reason → gate → act → observe → reason …
 *
 * Pure: no I/O. The four side-effecting steps are promise actors registered by name in
 * `setup({ actors })`; the runtime supplies real implementations with `agentMachine.provide()`,
 * tests supply scripted ones. Every decision is emitted as a `LoopEvent` (`actor.on('*', …)`),
 * so the runtime can journal and publish it without the machine knowing about either.
 *
 * @example
 * ```ts
 * const machine = agentMachine.provide({ actors: { reason, gate, act } });
 * const actor = createActor(machine, { input, inspect });
 * actor.on('*', (event) => console.log(event.type));
 * actor.start();
 * ```
 */
import { assign, emit, fromPromise, setup } from 'xstate';
import type { Message } from '../src/conversation/messages.ts';
import type { TerminationReason } from '../src/events/loopEvent.ts';
import type {
  ActInput,
  ActOutput,
  AgentContext,
  AgentEmitted,
  AgentEvent,
  AgentMachineInput,
  AgentOutput,
  GateInput,
  GateOutput,
  HydrateInput,
  HydrateOutput,
  PlannedCall,
  ReasonInput,
  ReasonOutput,
  ToolOutcome,
} from './agent.types.ts';
import {
  appendObservations,
  errorData,
  hasPendingHuman,
  isStuck,
  missingOutcome,
  pendingHuman,
  resolveHuman,
  runnableCalls,
  stuckTermination,
  turnWasAllInvalid,
} from './agent.logic.ts';

const notProvided = (name: string) =>
  fromPromise<never, unknown>(async () => {
    throw new Error(`The agent machine's "${name}" actor has no implementation: supply one with agentMachine.provide({ actors: { ${name} } }).`);
  });

function terminate(reason: TerminationReason, error?: unknown) {
  return { reason, ...(error === undefined ? {} : { error, errorData: errorData(error) }) };
}

export const agentMachine = setup({
  types: {
    context: {} as AgentContext,
    events: {} as AgentEvent,
    input: {} as AgentMachineInput,
    output: {} as AgentOutput,
    emitted: {} as AgentEmitted,
  },
  actors: {
    hydrate: fromPromise<HydrateOutput, HydrateInput>(async () => ({ inject: [] })),
    reason: notProvided('reason') as unknown as ReturnType<typeof fromPromise<ReasonOutput, ReasonInput>>,
    gate: notProvided('gate') as unknown as ReturnType<typeof fromPromise<GateOutput, GateInput>>,
    act: notProvided('act') as unknown as ReturnType<typeof fromPromise<ActOutput, ActInput>>,
  },
  actions: {
    emitTerminated: emit(({ context }) => ({
      type: 'run.terminated' as const,
      reason: context.termination?.reason ?? 'error',
      iterations: context.iteration,
      usage: { ...context.usage },
      ...(context.termination?.errorData === undefined ? {} : { error: context.termination.errorData }),
    })),
  },
  delays: {
    runTimeout: ({ context }) => context.limits.timeoutMs,
  },
  guards: {
    hasToolCalls: ({ context }) => context.plan.length > 0,
    awaitsHuman: ({ context }) => hasPendingHuman(context),
    hasRunnableCalls: ({ context }) => runnableCalls(context).length > 0,
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
    messages.push({ role: 'user', content: input.task });
    return {
      runId: input.runId,
      agentId: input.agentId,
      task: input.task,
      model: input.model,
      toolNames: input.toolNames,
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
      })),
      after: {
        runTimeout: { target: 'failed', actions: assign({ termination: () => terminate('timeout') }) },
      },
      on: {
        'agent.cancel': { target: 'cancelled', actions: assign({ termination: () => terminate('cancelled') }) },
      },
      initial: 'hydrate',
      states: {
        hydrate: {
          description: 'Pre-hydration: resolve references in the task before the first model call.',
          entry: emit({ type: 'phase.entered' as const, phase: 'hydrate' as const }),
          invoke: {
            src: 'hydrate',
            input: ({ context }) => ({ runId: context.runId, task: context.task, messages: context.messages }),
            onDone: {
              target: 'reason',
              actions: assign({
                messages: ({ context, event }) => {
                  if (event.output.inject.length === 0) return context.messages;
                  // Injected context goes right before the task (the last message).
                  const head = context.messages.slice(0, -1);
                  return [...head, ...event.output.inject, ...context.messages.slice(-1)];
                },
              }),
            },
            onError: { target: '#agent.failed', actions: assign({ termination: ({ event }) => terminate('error', event.error) }) },
          },
        },
        reason: {
          description: 'The model proposes tool calls or a final answer.',
          entry: emit({ type: 'phase.entered' as const, phase: 'reason' as const }),
          invoke: {
            src: 'reason',
            input: ({ context }) => ({ runId: context.runId, iteration: context.iteration, messages: context.messages }),
            onDone: {
              target: 'proposal',
              actions: [
                assign(({ context, event }) => {
                  const { text, toolCalls, usage, costUsd } = event.output;
                  const assistant: Message =
                    toolCalls.length > 0
                      ? { role: 'assistant', content: text, toolCalls: [...toolCalls] }
                      : { role: 'assistant', content: text ?? '' };
                  return {
                    iteration: context.iteration + 1,
                    messages: [...context.messages, assistant],
                    usage: {
                      promptTokens: context.usage.promptTokens + usage.promptTokens,
                      completionTokens: context.usage.completionTokens + usage.completionTokens,
                      totalTokens: context.usage.totalTokens + usage.totalTokens,
                    },
                    costUsd: context.costUsd + costUsd,
                    text,
                    plan: toolCalls.map((call): PlannedCall => ({ call, arguments: undefined, verdict: 'blocked' })),
                  };
                }),
                emit(({ event }) => ({
                  type: 'reasoning.completed' as const,
                  text: event.output.text,
                  toolCalls: event.output.toolCalls.map((c) => ({ id: c.id, name: c.name })),
                  usage: { ...event.output.usage },
                  costUsd: event.output.costUsd,
                })),
              ],
            },
            onError: { target: '#agent.failed', actions: assign({ termination: ({ event }) => terminate('error', event.error) }) },
          },
        },
        proposal: {
          description: 'Routes the proposal: tool calls go to the gate, a reply without calls is the final answer.',
          always: [{ guard: 'hasToolCalls', target: 'gate' }, { target: '#agent.done' }],
        },
        gate: {
          description: 'The policy gate allows, denies or modifies each proposed call.',
          entry: emit({ type: 'phase.entered' as const, phase: 'gate' as const }),
          invoke: {
            src: 'gate',
            input: ({ context }) => ({
              runId: context.runId,
              iteration: context.iteration,
              calls: context.plan.map((p) => p.call),
              messages: context.messages,
            }),
            onDone: {
              target: 'schedule',
              actions: assign(({ context, event }) => ({
                plan: event.output.plan,
                outcomes: event.output.plan.map(() => null),
                repairTurns: turnWasAllInvalid(event.output.plan) ? context.repairTurns + 1 : 0,
              })),
            },
            onError: { target: '#agent.failed', actions: assign({ termination: ({ event }) => terminate('error', event.error) }) },
          },
        },
        schedule: {
          description: 'Routes gated calls: wait for a human, run what is runnable, or observe the results.',
          always: [
            { guard: 'awaitsHuman', target: 'awaitingHuman' },
            { guard: 'hasRunnableCalls', target: 'act' },
            { target: 'observe' },
          ],
        },
        awaitingHuman: {
          description: 'Waiting for a human to approve or reject calls that need confirmation or were escalated.',
          entry: [
            assign({ pending: ({ context }) => pendingHuman(context) }),
            emit({ type: 'phase.entered' as const, phase: 'awaitingHuman' as const }),
            emit(({ context }) => ({
              type: 'human.awaiting' as const,
              kind: context.pending?.kind ?? 'confirmation',
              toolCallIds: [...(context.pending?.toolCallIds ?? [])],
            })),
          ],
          on: {
            'agent.approve': {
              target: 'schedule',
              // Emit first, reading the pending ids from the plan: the exit action has already
              // cleared `pending`, and the assign below resolves the calls.
              actions: [
                emit(({ context, event }) => ({
                  type: 'human.decided' as const,
                  decision: 'approve' as const,
                  toolCallIds: [...(event.toolCallIds ?? pendingHuman(context)?.toolCallIds ?? [])],
                })),
                assign(({ context, event }) => resolveHuman(context, 'approve', event.toolCallIds)),
              ],
            },
            'agent.reject': {
              target: 'schedule',
              actions: [
                emit(({ context, event }) => ({
                  type: 'human.decided' as const,
                  decision: 'reject' as const,
                  toolCallIds: [...(event.toolCallIds ?? pendingHuman(context)?.toolCallIds ?? [])],
                  ...(event.reason === undefined ? {} : { reason: event.reason }),
                })),
                assign(({ context, event }) => resolveHuman(context, 'reject', event.toolCallIds, event.reason)),
              ],
            },
          },
          exit: assign({ pending: null }),
        },
        act: {
          description: 'Approved calls run in parallel under concurrency, timeout, breaker and recovery rules.',
          entry: [
            emit({ type: 'phase.entered' as const, phase: 'act' as const }),
            emit(({ context }) => ({
              type: 'tools.dispatched' as const,
              calls: runnableCalls(context).map((c) => ({ id: c.call.id, name: c.call.name })),
            })),
          ],
          invoke: {
            src: 'act',
            input: ({ context }) => ({ runId: context.runId, iteration: context.iteration, calls: runnableCalls(context) }),
            onDone: {
              target: 'schedule',
              actions: assign({
                outcomes: ({ context, event }) => {
                  const outcomes: (ToolOutcome | null)[] = [...context.outcomes];
                  const calls = runnableCalls(context);
                  for (let i = 0; i < calls.length; i++) {
                    const { index, call } = calls[i] as (typeof calls)[number];
                    // A missing outcome would leave the call runnable forever: record it as an error instead.
                    outcomes[index] = event.output.outcomes[i] ?? missingOutcome(call);
                  }
                  return outcomes;
                },
                // Sticky: a later act phase of the same turn (after a human decision) must not clear it.
                stuck: ({ context, event }) => event.output.stuck?.reason ?? context.stuck,
              }),
            },
            onError: { target: '#agent.failed', actions: assign({ termination: ({ event }) => terminate('error', event.error) }) },
          },
        },
        observe: {
          description: 'Results enter the conversation; limits decide whether the loop continues.',
          entry: [
            emit({ type: 'phase.entered' as const, phase: 'observe' as const }),
            emit(({ context }) => ({
              type: 'observations.collected' as const,
              count: context.plan.length,
              errors: context.plan.filter((p, i) => p.verdict === 'blocked' || context.outcomes[i]?.isError === true).length,
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
    ...(context.termination?.error === undefined ? {} : { error: context.termination.error }),
    ...(context.termination?.errorData === undefined ? {} : { errorData: context.termination.errorData }),
  }),
});

export type AgentMachine = typeof agentMachine;
