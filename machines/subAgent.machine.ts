/**
 * A sub-agent run as a child actor of its parent — a strategy runner's branch, an agent host's
 * task:
 *
 *   preparing ─▶ running ─▶ concluding ─▶ done
 *
 * `prepare` makes the run ready (which agent, what input); the machine then spawns the agent
 * loop as its own child `agent`, with the run id as its `systemId`. So the run lives in the
 * parent's actor system, its parent chain leads to the runner or host, and stopping any ancestor
 * stops it through XState. `attach` hooks the spawned actor into its agent in the same step,
 * before XState starts it; `conclude` turns the finished run into what the parent wants (a
 * thought, a reply). All three are supplied with `.provide()`; a failure of any of them fails
 * this actor, so the parent sees an ordinary `xstate.error.actor.*` event.
 *
 * @example
 * ```ts
 * const branch = subAgentMachine.provide({ actors: { prepare, conclude }, actions: { attach } });
 * const runner = strategyMachine.provide({ actors: { branch, init, step, aggregate } });
 * ```
 */
import { assign, setup, type AnyActorLogic, type AnyActorRef } from 'xstate';
import { notProvided } from './notProvided.ts';

/** The parent's request: a branch, a task. Only `prepare` and `conclude` read it. */
export type SubAgentRequest = object;

/** A run made ready: the logic to spawn (the agent loop, provided with its phases) and its input. */
export interface SubAgentPrepared {
  readonly runId: string;
  readonly logic: AnyActorLogic;
  readonly input: unknown;
}

/** What `attach` gets: the spawned agent actor, not yet started. */
export interface SubAgentAttach {
  readonly runId: string;
  readonly actor: AnyActorRef;
}

/** What `conclude` gets: the parent's request and the run that ran it. */
export interface SubAgentConclude {
  readonly request: SubAgentRequest;
  readonly runId: string;
}

export interface SubAgentContext {
  /** The parent's request (a branch, a task), passed on to `prepare` and `conclude`. */
  readonly request: SubAgentRequest;
  readonly runId: string | null;
  readonly agent: AnyActorRef | null;
  readonly output: unknown;
}


const errorOf = ({ event }: { event: { error: unknown } }): unknown => event.error;

export const subAgentMachine = setup({
  types: {
    context: {} as SubAgentContext,
    input: {} as SubAgentRequest,
    output: {} as unknown,
  },
  actors: {
    prepare: notProvided<SubAgentPrepared, SubAgentRequest>('subAgent', 'prepare'),
    conclude: notProvided<unknown, SubAgentConclude>('subAgent', 'conclude'),
  },
  actions: {
    attach: (_, _params: SubAgentAttach) => {
      throw new Error('The sub-agent machine\'s "attach" action has no implementation: supply one with subAgentMachine.provide({ actions: { attach } }).');
    },
    /** A failed step fails this actor: its parent handles it like any failed child. */
    fail: (_, error: unknown) => {
      throw error;
    },
  },
}).createMachine({
  id: 'subAgent',
  description: 'A sub-agent run: prepared, spawned as the child `agent` in this system, concluded into what the parent asked for.',
  context: ({ input }) => ({ request: input, runId: null, agent: null, output: undefined }),
  initial: 'preparing',
  states: {
    preparing: {
      description: 'Picks the agent and builds its run input.',
      invoke: {
        src: 'prepare',
        input: ({ context }) => context.request,
        onDone: {
          target: 'running',
          actions: [
            assign(({ event, spawn }) => ({
              runId: event.output.runId,
              // XState's types allow an id only for logic named in setup; at run time any logic takes one.
              agent: spawn(event.output.logic, { id: 'agent', systemId: event.output.runId, input: event.output.input } as { systemId: string; input: unknown }),
            })),
            // Same step as the spawn: XState starts the child after it, so nothing it emits is missed.
            { type: 'attach', params: ({ context }) => ({ runId: context.runId ?? '', actor: context.agent as AnyActorRef }) },
          ],
        },
        onError: { actions: { type: 'fail', params: errorOf } },
      },
    },
    running: {
      description: 'The agent loop runs as the child `agent`; stopping this actor stops it.',
      on: {
        'xstate.done.actor.agent': 'concluding',
        // The run's own result records what went wrong; concluding reads it.
        'xstate.error.actor.agent': 'concluding',
      },
    },
    concluding: {
      description: "Turns the finished run into the parent's answer.",
      invoke: {
        src: 'conclude',
        input: ({ context }) => ({ request: context.request, runId: context.runId ?? '' }),
        onDone: { target: 'done', actions: assign({ output: ({ event }) => event.output }) },
        onError: { actions: { type: 'fail', params: errorOf } },
      },
    },
    done: { type: 'final', description: 'Concluded; the agent child is stopped with this state.' },
  },
  output: ({ context }: { context: SubAgentContext }) => context.output,
});

export type SubAgentMachine = typeof subAgentMachine;
