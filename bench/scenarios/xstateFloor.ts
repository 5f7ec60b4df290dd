/**
 * Floor (b): the leanest XState v5 agent loop — two invoked promise actors per iteration (reason,
 * act), the gate as a guard on the transition between them, immutable `assign`s, `toPromise` for
 * the output. What XState itself costs for a loop of this shape; actorloop adds a gate, breakers,
 * events and a journal on top.
 */
import { assign, createActor, fromPromise, setup, toPromise } from 'xstate';
import { TASK, TOOL_NAME, expectAnswer, newCounts, nextStep, sleep, type CallCounts, type ReactConfig } from './react.ts';
import type { Contender } from './types.ts';

interface FloorMessage {
  readonly role: 'user' | 'assistant' | 'tool';
  readonly content: string | null;
  readonly call?: { readonly id: string; readonly name: string; readonly arguments: string };
}

interface FloorContext {
  readonly messages: readonly FloorMessage[];
  readonly iteration: number;
  readonly answer: string | null;
}

function createFloorMachine(config: ReactConfig, counts: CallCounts) {
  const allowed = new Set([TOOL_NAME]);
  return setup({
    types: { context: {} as FloorContext, output: {} as string | null },
    actors: {
      reason: fromPromise<FloorMessage, readonly FloorMessage[]>(async ({ input }) => {
        counts.model++;
        if (config.delayMs > 0) await sleep(config.delayMs);
        const last = input.at(-1);
        const step = nextStep(last?.role === 'tool' ? (last.content ?? '') : undefined, config.n);
        return 'call' in step
          ? { role: 'assistant', content: null, call: { id: `c${step.call}`, name: TOOL_NAME, arguments: JSON.stringify({ i: step.call }) } }
          : { role: 'assistant', content: step.answer };
      }),
      act: fromPromise<FloorMessage, FloorMessage>(async ({ input }) => {
        counts.tool++;
        const args = JSON.parse(input.call?.arguments ?? '{}') as { i: number };
        return { role: 'tool', content: String(args.i) };
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
              guard: ({ context, event }) => event.output.call !== undefined && allowed.has(event.output.call.name) && context.iteration < config.n,
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
    const machine = createFloorMachine(config, counts);
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
