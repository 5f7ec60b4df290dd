/**
 * Floor (b): the leanest XState v5 agent loop — two invoked promise actors per iteration (reason,
 * act), the gate as a guard on the transition between them, immutable `assign`s, `toPromise` for
 * the output. What XState itself costs for a loop of this shape; actorloop adds a gate, breakers,
 * events and a journal on top.
 */
import { assign, createActor, fromPromise, setup, toPromise } from 'xstate';
import { scriptedPhases, type FloorMessage, type FloorPhases } from './bareLoop.ts';
import { TASK, TOOL_NAME, expectAnswer, newCounts } from './react.ts';
import type { Contender } from './types.ts';

interface FloorContext {
  readonly messages: readonly FloorMessage[];
  readonly iteration: number;
  readonly answer: string | null;
}

/** The floor machine for react-`n`; `phases` are the bodies of its two promise actors. */
export function createFloorMachine(n: number, phases: FloorPhases) {
  const allowed = new Set([TOOL_NAME]);
  return setup({
    types: { context: {} as FloorContext, output: {} as string | null },
    actors: {
      reason: fromPromise<FloorMessage, readonly FloorMessage[]>(({ input }) => phases.reason(input)),
      act: fromPromise<FloorMessage, FloorMessage>(async ({ input }) => {
        if (input.call === undefined) throw new Error('act: the last message carries no call');
        return phases.act(input.call);
      }),
    },
  }).createMachine({
    id: 'floor',
    context: { messages: [{ role: 'user', content: TASK }], iteration: 0, answer: null },
    initial: 'reason',
    states: {
      reason: {
        invoke: {
          src: 'reason',
          input: ({ context }) => context.messages,
          onDone: [
            {
              // The gate: a tool call goes to act only if the tool is allowed and the iteration cap holds.
              guard: ({ context, event }) => event.output.call !== undefined && allowed.has(event.output.call.name) && context.iteration < n,
              target: 'act',
              actions: assign(({ context, event }) => ({ messages: [...context.messages, event.output], iteration: context.iteration + 1 })),
            },
            { target: 'done', actions: assign({ answer: ({ event }) => event.output.content }) },
          ],
          onError: 'failed',
        },
      },
      act: {
        invoke: {
          src: 'act',
          input: ({ context }) => context.messages.at(-1) as FloorMessage,
          onDone: { target: 'reason', actions: assign({ messages: ({ context, event }) => [...context.messages, event.output] }) },
          onError: 'failed',
        },
      },
      done: { type: 'final' },
      failed: { type: 'final' },
    },
    output: ({ context }) => context.answer,
  });
}

/**
 * @example
 * ```ts
 * const prepared = xstateFloor.create({ n: 10, delayMs: 0 });
 * await prepared.run();
 * ```
 */
export const xstateFloor: Contender = {
  id: 'xstate',
  label: '(b) XState floor: two invoked promise actors per iteration, gate as a guard',
  create(config) {
    const counts = newCounts();
    const machine = createFloorMachine(config.n, scriptedPhases(config, counts));
    return {
      counts,
      async run() {
        const actor = createActor(machine);
        actor.start();
        expectAnswer(await toPromise(actor), xstateFloor.label);
      },
    };
  },
};
