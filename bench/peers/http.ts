/**
 * The peers over loopback HTTP: the AI SDK's OpenAI-compatible provider and OpenAI Agents JS's
 * chat-completions model, each against the bench's OpenAI-compatible server.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { Agent, OpenAIChatCompletionsModel, run } from '@openai/agents';
import { generateText, stepCountIs } from 'ai';
import OpenAI from 'openai';
import { TASK, expectAnswer, newCounts, reactN } from '../scenarios/react.ts';
import type { HttpContender } from '../scenarios/types.ts';
import { aiSdkTools } from './aiSdk.ts';
import { agentsEcho } from './openaiAgents.ts';

export const aiSdkHttp: HttpContender = {
  id: 'ai_sdk_http',
  label: 'Vercel AI SDK 7: generateText, @ai-sdk/openai-compatible',
  create(target) {
    const counts = newCounts();
    const model = createOpenAICompatible({ name: 'bench', baseURL: target.baseURL, apiKey: 'bench' }).chatModel(target.model);
    const tools = aiSdkTools(counts);
    return {
      counts,
      async run() {
        const result = await generateText({ model, tools, prompt: TASK, stopWhen: stepCountIs(reactN(target) + 1) });
        expectAnswer(result.text, aiSdkHttp.label);
      },
    };
  },
};

export const openaiAgentsHttp: HttpContender = {
  id: 'openai_agents_http',
  label: 'OpenAI Agents JS 0.20: run(), OpenAIChatCompletionsModel',
  create(target) {
    const counts = newCounts();
    const model = new OpenAIChatCompletionsModel(new OpenAI({ baseURL: target.baseURL, apiKey: 'bench' }), target.model);
    const agent = new Agent({ name: 'react', instructions: 'Count.', model, tools: [agentsEcho(counts)] });
    return {
      counts,
      async run() {
        const result = await run(agent, TASK, { maxTurns: reactN(target) + 1 });
        expectAnswer(result.finalOutput, openaiAgentsHttp.label);
      },
    };
  },
};
