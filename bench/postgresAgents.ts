/**
 * The agent of the PostgreSQL section, defined the same way in the bench process (the client)
 * and in its worker processes: react-10 against a scripted model that answers by conversation
 * progress (so any worker can make any call of any run), and a no-op tool.
 */
import { z } from 'zod';
import { createAgent, defineTool, type Agent } from '../src/index.ts';
import { scriptedModel } from '../src/testing/index.ts';
import type { PostgresRuntime } from '../src/postgres/index.ts';

export const AGENT_ID = 'bench_react';
/** Tool calls per run: each run makes CALLS + 1 model calls. */
export const CALLS = 10;
export const ANSWER = 'done';
export const TASK = 'Call the noop tool ten times, then answer.';

/** `runtime` undefined: the same agent in memory. */
export function benchAgent(runtime: PostgresRuntime | undefined, options: { readonly delayMs: number }): Agent {
  const model = scriptedModel(
    (request) => {
      const done = request.messages.filter((message) => message.role === 'tool').length;
      // Ids from the progress, not the model's call counter: two workers' counters can agree.
      if (done < CALLS) return { toolCalls: [{ id: `c${done}`, name: 'noop', arguments: {} }], delayMs: options.delayMs };
      return { text: ANSWER, delayMs: options.delayMs };
    },
    { recordCalls: false },
  );
  const noop = defineTool({
    name: 'noop',
    description: 'Do nothing.',
    input: z.object({}),
    execute: async () => 'ok',
  });
  return createAgent({ id: AGENT_ID, model, tools: [noop], ...(runtime === undefined ? {} : { runtime }) });
}
