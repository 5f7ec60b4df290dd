/**
 * Floor (a): a bare async loop with the model inline — ask the script, run the tool, append,
 * repeat. No library on the path, no gate, no events: what the loop itself costs in plain
 * JavaScript. Its message shape and phases are shared with the XState floor (b).
 */
import { ANSWER, TASK, TOOL_NAME, expectAnswer, newCounts, nextStep, sleep, type CallCounts, type ReactConfig } from './react.ts';
import type { Contender } from './types.ts';

/** The floors' own message shape: just what the loop needs. */
export interface FloorMessage {
  readonly role: 'user' | 'assistant' | 'tool';
  readonly content: string | null;
  readonly call?: { readonly id: string; readonly name: string; readonly arguments: string };
}

/** What a floor does per iteration: ask the model for the next message, run the call it carries. */
export interface FloorPhases {
  readonly reason: (messages: readonly FloorMessage[]) => Promise<FloorMessage>;
  readonly act: (call: NonNullable<FloorMessage['call']>) => Promise<FloorMessage>;
}

/** The react-N script and the echo tool as plain functions, counting their calls. */
export function scriptedPhases(config: ReactConfig, counts: CallCounts): FloorPhases {
  return {
    async reason(messages) {
      counts.model++;
      if (config.delayMs > 0) await sleep(config.delayMs);
      const last = messages.at(-1);
      const step = nextStep(last?.role === 'tool' ? (last.content ?? '') : undefined, config.n);
      return 'call' in step
        ? { role: 'assistant', content: null, call: { id: `c${step.call}`, name: TOOL_NAME, arguments: JSON.stringify({ i: step.call }) } }
        : { role: 'assistant', content: step.answer };
    },
    async act(call) {
      counts.tool++;
      return { role: 'tool', content: String((JSON.parse(call.arguments) as { i: number }).i) };
    },
  };
}

/** The bare loop over any phases: floor (a) in-process, and over HTTP on the `openai` client. */
export async function bareRun(phases: FloorPhases, n: number, label: string): Promise<void> {
  const messages: FloorMessage[] = [{ role: 'user', content: TASK }];
  for (let iteration = 0; iteration <= n; iteration++) {
    const reply = await phases.reason(messages);
    messages.push(reply);
    if (reply.call === undefined) return expectAnswer(reply.content, label);
    messages.push(await phases.act(reply.call));
  }
  throw new Error(`${label}: no ${JSON.stringify(ANSWER)} after ${n + 1} iterations.`);
}

/**
 * @example
 * ```ts
 * const prepared = bareLoop.create({ n: 10, delayMs: 0 });
 * await prepared.run();
 * ```
 */
export const bareLoop: Contender = {
  id: 'bare',
  label: '(a) bare async loop, model inline',
  create(config) {
    const counts = newCounts();
    const phases = scriptedPhases(config, counts);
    return { counts, run: () => bareRun(phases, config.n, bareLoop.label) };
  },
};
