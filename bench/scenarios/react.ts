/**
 * The react-N scenario shared by every contender: a scripted model that answers instantly (or
 * after `delayMs`) with N−1 calls of an instant tool, then a final answer.
 *
 * The model is stateless across runs — it reads the iteration from the last tool result (the
 * tool echoes its `i` argument) — so one model serves sequential and concurrent runs alike, and
 * every contender pays exactly the same model cost.
 */
import { z } from 'zod';
import { defineTool } from '../../src/tools/defineTool.ts';
import { scriptedModel, type ScriptedModel } from '../../src/testing/scriptedModel.ts';
import type { ScriptStep } from '../../src/testing/scriptStep.ts';
import type { Message } from '../../src/conversation/messages.ts';

/** The final answer every run ends with; runners check it so no contender can skip work. */
export const ANSWER = 'done';

/** Fixed usage on every step: the model skips its chars/4 estimate (not the loop's cost). */
const USAGE = { promptTokens: 1, completionTokens: 1, totalTokens: 2 } as const;

/** One run of react-N with `n` model calls; `delayMs` per model call (0: answer in a microtask). */
export interface ReactConfig {
  readonly n: number;
  readonly delayMs: number;
}

/**
 * The instant tool: echoes its argument, synchronously.
 *
 * @example
 * ```ts
 * await echoTool.execute({ i: 3 }, context); // 3
 * ```
 */
export const echoTool = defineTool({
  name: 'echo',
  description: 'Echo the number back.',
  input: z.object({ i: z.number().int() }),
  execute: ({ i }) => i,
});

/** Iteration index of the next model call, read from the conversation's last message. */
export function nextIndex(messages: readonly Message[]): number {
  const last = messages[messages.length - 1];
  return last !== undefined && last.role === 'tool' ? Number(last.content) + 1 : 0;
}

/**
 * A scripted model answering react-N: call k < N−1 proposes `echo({ i: k })`, call N−1 answers.
 *
 * @example
 * ```ts
 * const model = reactModel({ n: 10, delayMs: 0 });
 * (await model.complete({ messages: [{ role: 'user', content: 'go' }] })).toolCalls[0]?.name; // 'echo'
 * ```
 */
export function reactModel(config: ReactConfig): ScriptedModel {
  const delay = config.delayMs > 0 ? { delayMs: config.delayMs } : {};
  // Steps are built once; argument strings skip JSON.stringify inside the model.
  const steps: ScriptStep[] = [];
  for (let k = 0; k < config.n - 1; k++) {
    steps.push({ toolCalls: [{ name: 'echo', arguments: `{"i":${k}}` }], usage: USAGE, ...delay });
  }
  const answer: ScriptStep = { text: ANSWER, usage: USAGE, ...delay };
  return scriptedModel((request) => steps[nextIndex(request.messages)] ?? answer, { recordCalls: false });
}

/** Fail loudly when a contender returned something other than the scripted answer. */
export function expectAnswer(text: string | null | undefined, who: string): void {
  if (text !== ANSWER) throw new Error(`${who}: expected the answer ${JSON.stringify(ANSWER)}, got ${JSON.stringify(text)}.`);
}
