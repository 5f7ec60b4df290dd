/**
 * Floor (a): a bare async loop with the model inline — ask the script, run the tool, append,
 * repeat. No library on the path, no gate, no events: what the loop itself costs in plain
 * JavaScript.
 */
import { ANSWER, TASK, expectAnswer, newCounts, nextStep, sleep, type CallCounts } from './react.ts';
import type { Contender } from './types.ts';

interface BareMessage {
  readonly role: 'user' | 'assistant' | 'tool';
  readonly content: string | null;
  readonly toolCall?: { readonly id: string; readonly name: string; readonly arguments: string };
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
    const counts: CallCounts = newCounts();
    const model = async (messages: readonly BareMessage[]): Promise<BareMessage> => {
      counts.model++;
      if (config.delayMs > 0) await sleep(config.delayMs);
      const last = messages.at(-1);
      const step = nextStep(last?.role === 'tool' ? (last.content ?? '') : undefined, config.n);
      return 'call' in step
        ? { role: 'assistant', content: null, toolCall: { id: `c${step.call}`, name: 'echo', arguments: JSON.stringify({ i: step.call }) } }
        : { role: 'assistant', content: step.answer };
    };
    const echo = async (args: { i: number }): Promise<string> => {
      counts.tool++;
      return String(args.i);
    };
    return {
      counts,
      async run() {
        const messages: BareMessage[] = [{ role: 'user', content: TASK }];
        for (let iteration = 0; iteration <= config.n; iteration++) {
          const reply = await model(messages);
          messages.push(reply);
          if (reply.toolCall === undefined) return expectAnswer(reply.content, bareLoop.label);
          const result = await echo(JSON.parse(reply.toolCall.arguments) as { i: number });
          messages.push({ role: 'tool', content: result });
        }
        throw new Error(`${bareLoop.label}: no ${JSON.stringify(ANSWER)} after ${config.n + 1} iterations.`);
      },
    };
  },
};
