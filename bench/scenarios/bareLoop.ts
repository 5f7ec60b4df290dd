/**
 * Contender (a): the loop a developer writes by hand — call the model, run the tools, append,
 * repeat. No gate, no breakers, no events, no limits beyond an iteration cap. The floor.
 */
import type { Message } from '../../src/conversation/messages.ts';
import type { ToolContext } from '../../src/tools/types.ts';
import { echoTool, expectAnswer, reactModel } from './react.ts';
import type { Contender } from './types.ts';

const context: ToolContext = {
  signal: new AbortController().signal,
  toolCallId: 'bare',
  idempotencyKey: 'bare',
  runId: 'bare',
  agentId: 'bare',
};

/**
 * @example
 * ```ts
 * const runOnce = bareLoop.create({ n: 10, delayMs: 0 });
 * await runOnce();
 * ```
 */
export const bareLoop: Contender = {
  id: 'bare',
  label: '(a) hand-written async loop',
  create(config) {
    const model = reactModel(config);
    const tools = new Map([[echoTool.name, echoTool]]);
    const specs = [echoTool.spec];
    return async () => {
      const messages: Message[] = [{ role: 'user', content: 'Count with the echo tool.' }];
      for (let iteration = 0; iteration <= config.n; iteration++) {
        const reply = await model.complete({ messages, tools: specs });
        if (reply.toolCalls.length === 0) return expectAnswer(reply.text, 'bare loop');
        messages.push({ role: 'assistant', content: reply.text, toolCalls: [...reply.toolCalls] });
        for (const call of reply.toolCalls) {
          const tool = tools.get(call.name);
          if (tool === undefined) throw new Error(`unknown tool ${call.name}`);
          const result = await tool.execute(JSON.parse(call.arguments) as { i: number }, context);
          messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: String(result) });
        }
      }
      throw new Error('bare loop: too many iterations');
    };
  },
};
