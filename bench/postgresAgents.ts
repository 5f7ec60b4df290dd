/**
 * The agents of the PostgreSQL section, defined the same way in the bench process (the client)
 * and in its worker processes: react-10 against a scripted model that answers by conversation
 * progress (so any worker can make any call of any run), and a no-op tool; and an agent whose
 * one tool call waits for a human, to fill the database with waiting runs.
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

export const WAITING_AGENT_ID = 'bench_waiting';
export const WAITING_TASK = 'Send the mail once a human approves it.';
export const WAITING_ANSWER = 'sent';

/**
 * Calls made in one process: model calls by task (each run's task is unique), tool calls by run
 * id. Counted where they are made, not read from the runtime's tables, which may change.
 */
export interface CallCounts {
  readonly model: Record<string, number>;
  readonly tool: Record<string, number>;
}

export const newCallCounts = (): CallCounts => ({ model: {}, tool: {} });

/** `runtime` undefined: the same agent in memory. `counts`: where to count its calls. */
export function benchAgent(runtime: PostgresRuntime | undefined, options: { readonly delayMs: number; readonly counts?: CallCounts }): Agent {
  const counts = options.counts;
  const model = scriptedModel(
    (request) => {
      if (counts !== undefined) bump(counts.model, String(request.messages.find((message) => message.role === 'user')?.content));
      const done = request.messages.filter((message) => message.role === 'tool').length;
      // Ids from the progress, not the model's call counter: two workers' counters can agree.
      if (done < CALLS) return { toolCalls: [{ id: `c${done}`, name: 'noop', arguments: { step: done } }], delayMs: options.delayMs };
      return { text: ANSWER, delayMs: options.delayMs };
    },
    { recordCalls: false },
  );
  const noop = defineTool({
    name: 'noop',
    description: 'Do nothing.',
    input: z.object({ step: z.number() }),
    execute: async (_input, context) => {
      if (counts !== undefined) bump(counts.tool, context.runId);
      return 'ok';
    },
  });
  return createAgent({ id: AGENT_ID, model, tools: [noop], ...(runtime === undefined ? {} : { runtime }) });
}

/** One call of a tool that requires confirmation: each run waits for a human after its first model call. */
export function waitingAgent(runtime: PostgresRuntime): Agent {
  const model = scriptedModel(
    (request) => (request.messages.some((message) => message.role === 'tool') ? { text: WAITING_ANSWER } : { toolCalls: [{ id: 's1', name: 'send', arguments: {} }] }),
    { recordCalls: false },
  );
  const send = defineTool({ name: 'send', description: 'Send the mail.', input: z.object({}), requiresConfirmation: true, execute: () => 'sent' });
  return createAgent({ id: WAITING_AGENT_ID, model, tools: [send], runtime });
}

/** The counts of several processes as one. */
export function mergeCounts(all: readonly CallCounts[]): CallCounts {
  const merged = newCallCounts();
  for (const counts of all) {
    for (const [key, n] of Object.entries(counts.model)) bump(merged.model, key, n);
    for (const [key, n] of Object.entries(counts.tool)) bump(merged.tool, key, n);
  }
  return merged;
}

/** Throws unless `runs` runs each made exactly CALLS + 1 model and CALLS tool calls: none lost, none made twice. */
export function checkCounts(counts: CallCounts, runs: number): void {
  const wrong = (calls: Record<string, number>, each: number) => {
    const values = Object.values(calls);
    return values.length !== runs || values.some((n) => n !== each);
  };
  if (wrong(counts.model, CALLS + 1) || wrong(counts.tool, CALLS)) {
    const histogram = (calls: Record<string, number>) => JSON.stringify(Object.values(calls).reduce<Record<number, number>>((h, n) => ({ ...h, [n]: (h[n] ?? 0) + 1 }), {}));
    throw new Error(
      `PostgreSQL bench: expected ${runs} runs of ${CALLS + 1} model and ${CALLS} tool calls each; runs by model calls made: ${histogram(counts.model)}, by tool calls: ${histogram(counts.tool)}.`,
    );
  }
}

function bump(calls: Record<string, number>, key: string, by = 1): void {
  calls[key] = (calls[key] ?? 0) + by;
}
