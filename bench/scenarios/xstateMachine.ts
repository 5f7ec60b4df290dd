/**
 * Contender (b): a minimal XState v5 agent loop, written the way the XState docs suggest —
 * four phase states (reason, gate, act, observe), promise actors for the model, the gate and
 * the tools, immutable `assign`s, and `toPromise` to await the output. No events, breakers or
 * journal: the baseline that actorloop's overhead is measured against.
 */
import { assign, createActor, fromPromise, setup, toPromise } from 'xstate';
import type { Message, ToolCall, ToolMessage } from '../../src/conversation/messages.ts';
import type { Completion } from '../../src/inference/provider.ts';
import { echoTool, expectAnswer, reactModel } from './react.ts';
import type { Contender } from './types.ts';

interface LoopContext {
  readonly messages: readonly Message[];
  readonly calls: readonly ToolCall[];
  readonly results: readonly ToolMessage[];
  readonly iteration: number;
  readonly maxIterations: number;
  readonly answer: string | null;
}

function createReactMachine(config: Parameters<Contender['create']>[0]) {
  const model = reactModel(config);
  const tools = new Map([[echoTool.name, echoTool]]);
  const specs = [echoTool.spec];
  return setup({
    types: {
      context: {} as LoopContext,
      input: {} as { task: string; maxIterations: number },
      output: {} as string | null,
    },
    actors: {
      reason: fromPromise<Completion, { messages: readonly Message[] }>(({ input, signal }) =>
        model.complete({ messages: input.messages, tools: specs, signal }),
      ),
      gate: fromPromise<ToolCall[], { calls: readonly ToolCall[] }>(async ({ input }) => input.calls.filter((call) => tools.has(call.name))),
      act: fromPromise<ToolMessage[], { calls: readonly ToolCall[] }>(({ input, signal }) =>
        Promise.all(
          input.calls.map(async (call): Promise<ToolMessage> => {
            const tool = tools.get(call.name);
            if (tool === undefined) return { role: 'tool', toolCallId: call.id, content: `unknown tool ${call.name}`, isError: true };
            const context = { signal, toolCallId: call.id, idempotencyKey: call.id, runId: 'xstate', agentId: 'xstate' };
            const result = await tool.execute(JSON.parse(call.arguments) as { i: number }, context);
            return { role: 'tool', toolCallId: call.id, name: call.name, content: String(result) };
          }),
        ),
      ),
    },
  }).createMachine({
    id: 'react',
    context: ({ input }) => ({
      messages: [{ role: 'user', content: input.task }],
      calls: [],
      results: [],
      iteration: 0,
      maxIterations: input.maxIterations,
      answer: null,
    }),
    initial: 'reason',
    states: {
      reason: {
        invoke: {
          src: 'reason',
          input: ({ context }) => ({ messages: context.messages }),
          onDone: [
            {
              guard: ({ event }) => event.output.toolCalls.length > 0,
              target: 'gate',
              actions: assign(({ context, event }) => ({
                messages: [...context.messages, { role: 'assistant' as const, content: event.output.text, toolCalls: [...event.output.toolCalls] }],
                calls: event.output.toolCalls,
                iteration: context.iteration + 1,
              })),
            },
            { target: 'done', actions: assign({ answer: ({ event }) => event.output.text }) },
          ],
          onError: 'failed',
        },
      },
      gate: {
        invoke: {
          src: 'gate',
          input: ({ context }) => ({ calls: context.calls }),
          onDone: { target: 'act', actions: assign({ calls: ({ event }) => event.output }) },
          onError: 'failed',
        },
      },
      act: {
        invoke: {
          src: 'act',
          input: ({ context }) => ({ calls: context.calls }),
          onDone: { target: 'observe', actions: assign({ results: ({ event }) => event.output }) },
          onError: 'failed',
        },
      },
      observe: {
        entry: assign(({ context }) => ({ messages: [...context.messages, ...context.results], results: [], calls: [] })),
        always: [{ guard: ({ context }) => context.iteration >= context.maxIterations, target: 'failed' }, { target: 'reason' }],
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
 * const runOnce = xstateMachine.create({ n: 10, delayMs: 0 });
 * await runOnce();
 * ```
 */
export const xstateMachine: Contender = {
  id: 'xstate',
  label: '(b) minimal XState machine',
  create(config) {
    const machine = createReactMachine(config);
    return async () => {
      const actor = createActor(machine, { input: { task: 'Count with the echo tool.', maxIterations: config.n + 1 } });
      actor.start();
      expectAnswer(await toPromise(actor), 'minimal XState machine');
    };
  },
};
