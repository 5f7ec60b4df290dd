/**
 * The loopback-HTTP contenders in actorloop's own install: actorloop with its OpenAI-compatible
 * provider, and the loop a developer writes by hand on the `openai` client.
 */
import OpenAI from 'openai';
import { openAICompatible } from '../../src/index.ts';
import { echoTool, runAgent } from './actorloop.ts';
import { TASK, TOOL_DESCRIPTION, TOOL_NAME, expectAnswer, newCounts, type ReactConfig } from './react.ts';
import type { HttpContender } from './types.ts';

const n = (target: { model: string }): number => Number(target.model.replace('react-', ''));

export const actorloopHttp: HttpContender = {
  id: 'actorloop_http',
  label: '(c) actorloop, all defaults, openAICompatible provider',
  create(target) {
    const counts = newCounts();
    const model = openAICompatible({ baseURL: target.baseURL, apiKey: 'bench', model: target.model });
    return { counts, run: runAgent({ model, tools: [echoTool(counts)], limits: { maxIterations: n(target) + 1 } }, actorloopHttp.label) };
  },
};

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  { type: 'function', function: { name: TOOL_NAME, description: TOOL_DESCRIPTION, parameters: { type: 'object', properties: { i: { type: 'integer' } }, required: ['i'] } } },
];

export const bareOpenAI: HttpContender = {
  id: 'bare_openai',
  label: '(a) bare async loop on the openai client',
  create(target) {
    const counts = newCounts();
    const client = new OpenAI({ baseURL: target.baseURL, apiKey: 'bench' });
    const config: ReactConfig = { n: n(target), delayMs: 0 };
    return {
      counts,
      async run() {
        const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: TASK }];
        for (let iteration = 0; iteration <= config.n; iteration++) {
          const message = (await client.chat.completions.create({ model: target.model, messages, tools })).choices[0]?.message;
          if (message === undefined) throw new Error(`${bareOpenAI.label}: a completion without a choice.`);
          messages.push(message);
          const calls = message.tool_calls ?? [];
          if (calls.length === 0) return expectAnswer(message.content, bareOpenAI.label);
          for (const call of calls) {
            if (call.type !== 'function' || call.function.name !== TOOL_NAME) throw new Error(`${bareOpenAI.label}: unexpected tool call.`);
            const { i } = JSON.parse(call.function.arguments) as { i: number };
            counts.tool++;
            messages.push({ role: 'tool', tool_call_id: call.id, content: String(i) });
          }
        }
        throw new Error(`${bareOpenAI.label}: no answer after ${config.n + 1} iterations.`);
      },
    };
  },
};
